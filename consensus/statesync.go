package consensus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
)

// StateSync makes a node with no state restore it from a peer's snapshot
// (CometBFT state sync) instead of replaying the chain from genesis, then
// block-sync from the snapshot's height. CometBFT's light client verifies
// the snapshot's app hash from the trusted block through RPCServers.
type StateSync struct {
	// RPCServers are the CometBFT RPC URLs of at least two nodes of the
	// chain: the light client's primary and witnesses, and the nodes the
	// trusted block is agreed with.
	RPCServers []string
	// TrustHeight and TrustHash name the trusted block; 0 and "" take them
	// from RPCServers (ResolveTrust), refused unless they agree.
	TrustHeight int64
	TrustHash   string
	// TrustPeriod is how old the trusted block may be (0 =
	// DefaultTrustPeriod): the light client refuses an older one.
	TrustPeriod time.Duration
}

// DefaultTrustPeriod is CometBFT's default: a week, within any chain's
// unbonding time here (a validator set that signed a week ago still has
// stake at risk).
const DefaultTrustPeriod = 168 * time.Hour

// SnapshotsQuery is the ABCI query path answering the newest snapshot
// height a node offers (decimal, 0 = none), so a joining node can tell
// whether state sync has anything to restore before it starts.
const SnapshotsQuery = "snapshots"

// ErrTrustDisagree is returned by ResolveTrust when the RPC servers name
// different blocks at the trust height: one of them is on another chain,
// or lies, and the join stops rather than trust either.
var ErrTrustDisagree = errors.New("consensus: state sync: the chain's nodes disagree on the trusted block")

// TrustRoot is the block a joining node trusts, as its peers agreed on it.
type TrustRoot struct {
	Height   int64  // the trusted height: the newest snapshot's, or 0 when none
	Hash     string // the block hash at Height, upper-case hex as CometBFT writes it
	Snapshot int64  // the newest snapshot height any server offers; 0 = replay from genesis
	Latest   int64  // the lowest latest height among the servers
	Servers  int    // how many servers agreed
}

// serverView is what one RPC server told ResolveTrust.
type serverView struct {
	url      string
	c        *rpchttp.HTTP
	latest   int64
	snapshot int64
}

// ResolveTrust asks every server for its chain, latest height and newest
// snapshot, takes the newest snapshot height all of them have reached as
// the trust height, and returns the block hash there if at least two
// servers answer and every one that answers names the same block. Servers
// that cannot be reached are skipped; a server on another chain, or a
// hash that differs, refuses the join (ErrTrustDisagree).
func ResolveTrust(ctx context.Context, chainID string, servers []string) (TrustRoot, error) {
	var views []serverView
	var unreachable []string
	for _, s := range servers {
		v, err := viewServer(ctx, chainID, s)
		switch {
		case errors.Is(err, ErrTrustDisagree):
			return TrustRoot{}, err
		case err != nil:
			unreachable = append(unreachable, err.Error())
			continue
		}
		views = append(views, v)
	}
	if len(views) < 2 {
		return TrustRoot{}, fmt.Errorf("consensus: state sync: %d of %d RPC servers answered, at least 2 must agree on the trusted block: %s",
			len(views), len(servers), strings.Join(unreachable, "; "))
	}
	root := TrustRoot{Latest: views[0].latest, Servers: len(views)}
	for _, v := range views {
		root.Latest = min(root.Latest, v.latest)
		root.Snapshot = max(root.Snapshot, v.snapshot)
	}
	if root.Snapshot == 0 {
		return root, nil
	}
	// The trusted block is the snapshot's own: the light client then
	// verifies the two headers after it without walking the chain.
	root.Height = min(root.Snapshot, root.Latest)
	hashes := make([]string, len(views))
	for i, v := range views {
		h := root.Height
		c, err := v.c.Commit(ctx, &h)
		if err != nil {
			return TrustRoot{}, fmt.Errorf("consensus: state sync: commit %d from %s: %w", h, v.url, err)
		}
		if c.ChainID != chainID {
			return TrustRoot{}, fmt.Errorf("%w: %s sent a header of chain %q at %d, want %q", ErrTrustDisagree, v.url, c.ChainID, h, chainID)
		}
		hashes[i] = c.Hash().String()
	}
	for i := range views {
		if hashes[i] != hashes[0] {
			return TrustRoot{}, fmt.Errorf("%w at height %d: %s says %s, %s says %s (check the RPC servers, or give --trust-height and --trust-hash from a source you trust)",
				ErrTrustDisagree, root.Height, views[0].url, hashes[0], views[i].url, hashes[i])
		}
	}
	root.Hash = hashes[0]
	return root, nil
}

// viewServer reads one server's chain, latest height and newest snapshot.
func viewServer(ctx context.Context, chainID, server string) (serverView, error) {
	url := server
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	c, err := rpchttp.New(url)
	if err != nil {
		return serverView{}, fmt.Errorf("%s: %w", server, err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return serverView{}, fmt.Errorf("%s: status: %w", server, err)
	}
	if st.NodeInfo.Network != chainID {
		return serverView{}, fmt.Errorf("%w: %s runs chain %q, want %q", ErrTrustDisagree, server, st.NodeInfo.Network, chainID)
	}
	v := serverView{url: server, c: c, latest: st.SyncInfo.LatestBlockHeight}
	q, err := c.ABCIQuery(ctx, SnapshotsQuery, nil)
	if err != nil {
		return serverView{}, fmt.Errorf("%s: snapshots: %w", server, err)
	}
	if q.Response.Code == 0 {
		if v.snapshot, err = strconv.ParseInt(string(q.Response.Value), 10, 64); err != nil || v.snapshot < 0 {
			return serverView{}, fmt.Errorf("%s: snapshots: bad answer %q", server, q.Response.Value)
		}
	}
	return v, nil
}

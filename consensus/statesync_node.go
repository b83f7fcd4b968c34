package consensus

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	cmtcfg "github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"
)

// restoreProgress is what state sync restored so far (App.synced).
type restoreProgress struct {
	height                   int64
	chunks, applied, refused int
	done                     bool
}

// syncPlan is how a node's start restores its state, and the rate it
// catches up at, for estimates.
type syncPlan struct {
	stateSync bool
	trust     TrustRoot
	servers   []string
	chainID   string

	mu     sync.Mutex
	target int64 // the chain's height as the servers last told
	at     time.Time
	rate   rateSample
}

// rateSample remembers the first height seen catching up, to estimate the
// blocks per second.
type rateSample struct {
	h  int64
	at time.Time
}

// resolveTimeout bounds asking the RPC servers for the trusted block.
const resolveTimeout = 30 * time.Second

// discoveryTime is how long state sync collects snapshot offers before
// choosing one: CometBFT's minimum; the peers are persistent and dialled
// at start, so their offers come at once.
const discoveryTime = 5 * time.Second

func (s *StateSync) validate() error {
	if s == nil {
		return nil
	}
	switch {
	case len(s.RPCServers) < 2:
		return errors.New("consensus: config: state sync needs at least two RPC servers (the light client's primary and a witness)")
	case (s.TrustHeight > 0) != (s.TrustHash != ""):
		return errors.New("consensus: config: the trust height and the trust hash are given together or not at all")
	case s.TrustHeight < 0 || s.TrustPeriod < 0:
		return errors.New("consensus: config: negative trust height or trust period")
	}
	for _, r := range s.RPCServers {
		if r == "" {
			return errors.New("consensus: config: an empty state sync RPC server")
		}
	}
	if b, err := hex.DecodeString(s.TrustHash); err != nil || s.TrustHash != "" && len(b) != 32 {
		return fmt.Errorf("consensus: config: trust hash %q: want 64 hex digits", s.TrustHash)
	}
	return nil
}

// setupStateSync turns CometBFT's state sync on for a node with no state
// when its RPC servers agree on a trusted block at a snapshot; a chain
// with no snapshot yet is replayed from genesis.
func (n *Node) setupStateSync(ccfg *cmtcfg.Config) error {
	ss := n.cfg.StateSync
	if ss == nil || len(ss.RPCServers) == 0 || n.app.Height() > 0 {
		return nil
	}
	doc, err := cmttypes.GenesisDocFromFile(ccfg.GenesisFile())
	if err != nil {
		return fmt.Errorf("consensus: state sync: read genesis: %w", err)
	}
	root := TrustRoot{Height: ss.TrustHeight, Hash: ss.TrustHash}
	n.sync.servers, n.sync.chainID = ss.RPCServers, doc.ChainID
	if root.Height == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
		defer cancel()
		if root, err = ResolveTrust(ctx, doc.ChainID, ss.RPCServers); err != nil {
			return err
		}
		n.sync.target = root.Latest
		if root.Snapshot == 0 {
			n.log.Info("consensus: the chain offers no snapshot yet: replaying it from genesis", "height", root.Latest)
			return nil
		}
	}
	c := ccfg.StateSync
	c.Enable, c.RPCServers = true, ss.RPCServers
	c.TrustHeight, c.TrustHash, c.TrustPeriod = root.Height, root.Hash, ss.TrustPeriod
	if c.TrustPeriod == 0 {
		c.TrustPeriod = DefaultTrustPeriod
	}
	c.DiscoveryTime = discoveryTime
	if err := c.ValidateBasic(); err != nil {
		return fmt.Errorf("consensus: state sync: %w", err)
	}
	n.sync.stateSync, n.sync.trust = true, root
	n.log.Info("consensus: joining by state sync", "trust_height", root.Height, "trust_hash", root.Hash,
		"snapshot", root.Snapshot, "chain_height", root.Latest, "agreed_by", root.Servers)
	return nil
}

// SyncProgress is how far a node is in joining its chain.
type SyncProgress struct {
	StateSync      bool  // restoring from a snapshot rather than replaying from genesis
	TrustHeight    int64 // the block state sync trusts (0 without state sync)
	SnapshotHeight int64 // the snapshot being restored; 0 = none offered yet
	Chunks         int   // the snapshot's chunks
	ChunksApplied  int
	ChunksRefused  int   // chunks that did not match their hash, fetched again from another peer
	Restored       bool  // the snapshot is restored; blocks after it are being fetched
	Height         int64 // the last committed height
	Target         int64 // the chain's height as its nodes last told; 0 = unknown
	// Remaining estimates how long until Height reaches Target at the
	// rate blocks were committed so far; 0 = unknown or none.
	Remaining time.Duration
}

// Behind is how many blocks the node lacks, as far as it knows.
func (p SyncProgress) Behind() int64 { return max(p.Target-p.Height, 0) }

// String says where the join is, for a user waiting on it.
func (p SyncProgress) String() string {
	var s string
	switch {
	case p.StateSync && p.SnapshotHeight == 0:
		s = fmt.Sprintf("state sync: waiting for a snapshot offer (trusted block %d)", p.TrustHeight)
	case p.StateSync && !p.Restored:
		s = fmt.Sprintf("state sync: restoring the snapshot at block %d, chunk %d of %d", p.SnapshotHeight, p.ChunksApplied, p.Chunks)
	default:
		s = fmt.Sprintf("at block %d", p.Height)
		if p.Target > 0 {
			s += fmt.Sprintf(", %d behind", p.Behind())
		}
	}
	if p.Remaining > 0 {
		s += fmt.Sprintf(", about %s left", p.Remaining.Round(time.Second))
	}
	return s
}

// targetRefresh is how often SyncProgress asks the RPC servers for the
// chain's height.
const targetRefresh = 2 * time.Second

// SyncProgress reports the join's progress: the snapshot restored, the
// blocks committed and, through the state sync RPC servers (best effort,
// bounded by ctx), how many the node still lacks.
func (n *Node) SyncProgress(ctx context.Context) SyncProgress {
	p := SyncProgress{StateSync: n.sync.stateSync, TrustHeight: n.sync.trust.Height, Height: n.app.Height()}
	n.app.snapMu.Lock()
	r := n.app.synced
	n.app.snapMu.Unlock()
	p.SnapshotHeight, p.Chunks, p.ChunksApplied, p.ChunksRefused, p.Restored = r.height, r.chunks, r.applied, r.refused, r.done
	s := &n.sync
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if len(s.servers) > 0 && now.Sub(s.at) >= targetRefresh {
		s.at = now
		for _, url := range s.servers {
			if v, err := viewServer(ctx, s.chainID, url); err == nil {
				s.target = max(s.target, v.latest)
				break
			}
		}
	}
	p.Target = s.target
	if p.Height > 0 && (!p.StateSync || p.Restored) {
		if s.rate.at.IsZero() {
			s.rate = rateSample{h: p.Height, at: now}
		} else if done, took := p.Height-s.rate.h, now.Sub(s.rate.at); done > 0 && p.Behind() > 0 {
			p.Remaining = time.Duration(float64(took) * float64(p.Behind()) / float64(done))
		}
	}
	return p
}

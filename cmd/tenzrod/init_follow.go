package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// initChainFlags are init's flags for a home that follows a running chain.
type initChainFlags struct {
	genesis   string
	peers     []string
	chainFrom string
	p2pListen string
	sync      syncFlags
}

func (f *initChainFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.genesis, "genesis", "", "the chain's genesis.json: write a chain follower config for it (provider or gateway)")
	fs.StringSliceVar(&f.peers, "persistent-peers", nil, "CometBFT peers to follow the chain through, NODE_ID@HOST:PORT (comma-separated or repeated; with --genesis)")
	fs.StringVar(&f.chainFrom, "chain-from", "", "API URL of a running node of the network (http://host:port): its chain peers and libp2p addresses (with --genesis)")
	fs.StringVar(&f.p2pListen, "chain-p2p-listen", "", "this node's CometBFT p2p listen address, tcp://host:port (default: a free port chosen now)")
	f.sync.register(fs)
}

func (f *initChainFlags) follows() bool {
	return f.genesis != "" || len(f.peers) > 0 || f.chainFrom != "" || len(f.sync.rpc) > 0
}

// check names the flag that is missing or wrong.
func (f *initChainFlags) check(role node.Role) error {
	switch {
	case f.genesis == "":
		return errors.New("--persistent-peers, --chain-from and --chain-rpc need --genesis: the genesis.json of the chain to follow")
	case len(f.peers) == 0 && f.chainFrom == "":
		return errors.New("--genesis needs --persistent-peers NODE_ID@HOST:PORT,... or --chain-from URL (a running node's API): how to reach the chain")
	case role == node.RoleValidator:
		return errors.New("--genesis: a validator's chain is made with `tenzrod genesis` from its home; --genesis writes a follower (--role provider or gateway)")
	}
	for _, p := range f.peers {
		if err := checkChainPeer(p); err != nil {
			return fmt.Errorf("--persistent-peers: %w", err)
		}
	}
	return nil
}

// initFollower makes cfg a chain follower of cf.genesis with free ports, an
// operator account key and, with --chain-from, the peers and bootstrap
// addresses the running node gave.
func initFollower(cmd *cobra.Command, cfg *node.Config, cf initChainFlags) (*follower, error) {
	if err := freePorts(cfg); err != nil {
		return nil, err
	}
	peers := append([]string{}, cf.peers...)
	var src *chainSource
	if cf.chainFrom != "" {
		ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
		defer cancel()
		s, err := chainFrom(ctx, cf.chainFrom)
		if err != nil {
			return nil, err
		}
		doc, err := cmttypes.GenesisDocFromFile(cf.genesis)
		if err != nil {
			return nil, fmt.Errorf("--genesis: %w", err)
		}
		if doc.ChainID != s.info.ChainID {
			return nil, fmt.Errorf("--chain-from %s runs chain %q, but --genesis %s is chain %q", cf.chainFrom, s.info.ChainID, cf.genesis, doc.ChainID)
		}
		for _, p := range s.peers {
			if !contains(peers, p) {
				peers = append(peers, p)
			}
		}
		cfg.P2P.Bootstrap = s.bootstrap
		src = &s
	}
	listen := cf.p2pListen
	if listen == "" {
		listen = cfg.Chain.P2PListen
	}
	doc, err := followChain(cfg, followSpec{genesis: cf.genesis, peers: peers, peersFlag: "--persistent-peers", p2pListen: listen,
		networkFromChain: !cmd.Flags().Changed("network"), sync: cf.sync, out: cmd.OutOrStdout()})
	if err != nil {
		return nil, err
	}
	if _, err := consensus.LoadOrCreateAccountKey(cfg.Path(node.AccountKeyFile)); err != nil {
		return nil, err
	}
	return &follower{src: src, chainID: doc.ChainID}, nil
}

// follower is what initFollower set up: the chain and, with --chain-from,
// what the running node told.
type follower struct {
	src     *chainSource
	chainID string
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// txFeeRoom is how many transactions' fees the suggested funding leaves
// room for beyond the bond (the registration, name bindings, settlements).
const txFeeRoom = 100

// suggestedFunding is the bond plus txFeeRoom transaction fees plus what a
// full settlement must hold up front for its records (FeePerRecord ×
// MaxRecordsPerTx: the chain refuses a settlement its signer could not
// pay every record's fee of), or false if that overflows.
func suggestedFunding(p ledger.Params) (uint64, bool) {
	hi, fees := bits.Mul64(p.FeePerTx, txFeeRoom)
	hi2, hold := bits.Mul64(p.FeePerRecord, ledger.MaxRecordsPerTx)
	total, carry := bits.Add64(p.MinServingBond, fees, 0)
	total, carry2 := bits.Add64(total, hold, 0)
	return total, hi == 0 && hi2 == 0 && carry == 0 && carry2 == 0
}

// printFollowerNext prints who the new follower is on chain and the exact
// commands that make it serve.
func printFollowerNext(out io.Writer, cfg node.Config, f *follower) error {
	src := f.src
	key, err := consensus.ReadAccountKey(cfg.Path(node.AccountKeyFile))
	if err != nil {
		return err
	}
	account := terms.AccountOf(key.Public().(ed25519.PublicKey))
	fmt.Fprintf(out, "account      %s (%s: the operator account)\n", account, cfg.Path(node.AccountKeyFile))
	fmt.Fprintf(out, "chain        %s, following %d peer(s): %v\n", f.chainID, len(cfg.Chain.PersistentPeers), cfg.Chain.PersistentPeers)
	fmt.Fprintf(out, "api          http://%s\n", cfg.API.Listen)
	api, amount := "API", "AMOUNT"
	if src != nil {
		api = src.api
		if n, ok := suggestedFunding(src.params); ok {
			amount = fmt.Sprint(n)
		}
	}
	fmt.Fprintf(out, "\nNext (API: any node of the network with the chain, e.g. --chain-from's):\n")
	if cfg.Role != node.RoleProvider {
		fmt.Fprintf(out, "  tenzrod tx transfer --api %s --key FUNDED_KEY --to %s --amount %s   # fund this node's account\n", api, account, amount)
		fmt.Fprintf(out, "  %s\n", startCommand(cfg))
		return nil
	}
	bond := "the chain's min_serving_bond"
	if src != nil {
		bond = fmt.Sprintf("%d micro-units, the chain's min_serving_bond", src.params.MinServingBond)
	}
	fmt.Fprintf(out, "  1. fund the operator account (the bond is %s):\n", bond)
	fmt.Fprintf(out, "     tenzrod tx transfer --api %s --key FUNDED_KEY --to %s --amount %s\n", api, account, amount)
	fmt.Fprintf(out, "  2. register this machine (its hardware, ML-DSA-65 and peer keys sign it):\n")
	fmt.Fprintf(out, "     tenzrod tx register --api %s --home %s\n", api, cfg.Home)
	fmt.Fprintf(out, "  3. start it:\n")
	fmt.Fprintf(out, "     %s\n", startCommand(cfg))
	return nil
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
)

// howToPay tells the user of a gateway that follows no chain how to set
// up one that pays.
const howToPay = `to pay for calls, set up a paying gateway in another home (a home's chain is chosen when it is made):
  tenzrod join --home DIR --bootstrap MULTIADDR --genesis genesis.json --chain-peer NODE_ID@HOST:PORT \
      --account-key me.key --deposit 50_000_000
(your funded account key pays; on a devnet, devnet.json has the genesis, chain_peers and a funded buyer_key)`

// noChain says what a gateway home set up without --genesis cannot do.
func noChain(home string) string {
	return home + " follows no chain (it was set up without --genesis): this gateway cannot pay providers and has no bearer token, so every call to its OpenAI API is refused (401)"
}

// joinFlags are join's own flags: how a laptop follows the chain and pays.
type joinFlags struct {
	genesis    string
	accountKey string
	chainPeers []string
	chainP2P   string
	deposit    string
	sync       syncFlags
}

func newJoinCmd() *cobra.Command {
	var (
		home string
		nf   nodeFlags
		jf   joinFlags
	)
	cmd := &cobra.Command{
		Use:   "join --bootstrap MULTIADDR [--genesis FILE --chain-peer ID@HOST:PORT --account-key FILE --deposit AMOUNT] [--home DIR]",
		Short: "Join a network as a gateway on this machine, paying from your own escrow",
		Long: `join starts a gateway node on your own machine: it follows the network's gossip,
finds providers through the DHT, and serves the OpenAI API on localhost. Your
access token never leaves this machine.

With --genesis it also follows the chain (through --chain-peer, a validator's
CometBFT address, repeatable) and pays for your calls on chain: --account-key is
your account's key (tenzrod keys account), which becomes this gateway's
settler; --deposit opens, or tops up, your escrow with it by that many
micro-units (a transaction from your account's balance). Every call is then
paid from that escrow by a payment record this gateway signs and the serving
provider collects.

With two or more --chain-rpc (CometBFT RPC URLs of nodes of the chain) a new
home does not replay the chain from genesis: it restores the newest state
snapshot its peers offer (CometBFT state sync), verified by the light client
from a trusted block that every --chain-rpc must name alike (a disagreement
stops the join; --trust-height and --trust-hash give the block instead), then
fetches the blocks after it. join prints the progress: the snapshot, its
chunks, the blocks still behind.

Without --genesis it follows no chain: it cannot pay providers and issues no
bearer token, so its OpenAI API refuses every call (401); it says so at every
start. A home's chain is chosen when it is made: to pay, set up another
--home with --genesis.

On first use it writes a gateway config under --home (default ~/.tenzrod/join)
with a software identity key and, with --genesis, a bearer token printed once
(only its hash is stored). Later runs need no flag but --home; flags override
the config.`,
		Example: `  tenzrod join --bootstrap /ip4/203.0.113.7/tcp/4001/p2p/12D3KooW...
  tenzrod join --bootstrap /ip4/127.0.0.1/tcp/4001/p2p/12D3KooW... --genesis devnet/genesis.json \
      --chain-peer 3f2c…@127.0.0.1:26656 --account-key my.key --deposit 50_000_000
  tenzrod join --home ~/.tenzrod/join --deposit 10_000_000   # top up later`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var deposit uint64
			if cmd.Flags().Changed("deposit") {
				v, err := parseMicroUnits(jf.deposit)
				if err != nil {
					return fmt.Errorf("--deposit: %w", err)
				}
				deposit = v
			}
			cfg, err := node.Load(home)
			switch {
			case err == nil:
				if cmd.Flags().Changed("genesis") || cmd.Flags().Changed("account-key") || cmd.Flags().Changed("chain-rpc") {
					return fmt.Errorf("join: %s exists, and --genesis, --account-key and --chain-rpc only set up a new home: give another --home (or remove %s) to set up a paying gateway", filepath.Join(home, node.ConfigFile), home)
				}
			case errors.Is(err, os.ErrNotExist):
				if cfg, err = newJoinHome(cmd, home, nf, jf); err != nil {
					return err
				}
			default:
				return err
			}
			if cfg.Role != node.RoleGateway {
				return fmt.Errorf("config: role: %s is a %s home; join runs a gateway", home, cfg.Role)
			}
			nf.apply(&cfg, cmd.Flags())
			if !cfg.Chain.Enabled {
				if deposit > 0 {
					return fmt.Errorf("--deposit: %s, and has no escrow to deposit into;\n%s", noChain(home), howToPay)
				}
				if len(cfg.Router.Buyers) == 0 { // buyers set by hand bill a local balance (tests)
					fmt.Fprintf(cmd.OutOrStdout(), "%s.\n%s\n", noChain(home), howToPay)
				}
			}
			return runJoined(cmd.Context(), cmd.OutOrStdout(), cfg, deposit)
		},
	}
	cmd.Flags().StringVar(&home, "home", defaultHome("join"), "gateway home directory")
	cmd.Flags().StringVar(&jf.genesis, "genesis", "", "the network's genesis.json: follow the chain and pay on it (first run)")
	cmd.Flags().StringVar(&jf.accountKey, "account-key", "", "your account key file, this gateway's settler (first run, with --genesis)")
	cmd.Flags().StringSliceVar(&jf.chainPeers, "chain-peer", nil, "a validator's CometBFT address ID@HOST:PORT to follow the chain through (first run, with --genesis; repeatable)")
	cmd.Flags().StringVar(&jf.chainP2P, "chain-p2p-listen", "", "this node's CometBFT listen address (default: a free loopback port)")
	cmd.Flags().StringVar(&jf.deposit, "deposit", "", "micro-units to move from your account into your escrow with this gateway")
	jf.sync.register(cmd.Flags())
	nf.register(cmd.Flags(), node.RoleGateway)
	return cmd
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func newInitCmd() *cobra.Command {
	var (
		home  string
		role  string
		force bool
		nf    nodeFlags
		cf    initChainFlags
	)
	cmd := &cobra.Command{
		Use:   "init --home DIR --role validator|provider|gateway [--genesis FILE (--persistent-peers ID@HOST:PORT,... | --chain-from URL)]",
		Short: "Write a commented default config and create the node's keys",
		Long: `init writes HOME/config.toml with every key commented, creates the libp2p
peer key, and creates (or opens) the hardware identity key, then prints the
node's peer ID, machine ID and key backend. A provider home gets a small
generated test model so it runs end to end; list your own in
[[provider.models]] (the file shows an embedded and an upstream example).

To join a running network, give the chain's --genesis (the file the network
publishes; it is the chain you trust, so init never downloads it) and how to
reach the chain: --persistent-peers (CometBFT addresses, NODE_ID@HOST:PORT),
or --chain-from, the API URL of any node of the network that runs the chain:
init asks it (tenzro_nodeInfo) for its CometBFT node ID and address, its own
chain peers and its libp2p addresses (the bootstrap peers), and checks that
it runs the chain of --genesis. init then writes a complete chain follower
config: the genesis copied into the chain home, free ports chosen for the API,
libp2p, CometBFT p2p and CometBFT RPC (two homes on one host never collide),
an operator account key (HOME/account.key), and prints what to do next: the
account to fund, the tx register command and how to start the node.

Without --genesis the CometBFT p2p port is a free one chosen now (never a
fixed 26656 for every home); --chain-p2p-listen sets it.`,
		Example: `  tenzrod init --home ~/.tenzrod/provider --role provider --key-backend tpm --region DE
  # a provider of a running devnet (make devnet), on the same machine
  tenzrod init --home ./prov --role provider --key-backend tpm-sim \
      --genesis .devnet/genesis.json --chain-from http://127.0.0.1:PORT
  # a provider of a network whose validators you know
  tenzrod init --home ~/.tenzrod/provider --role provider --genesis genesis.json \
      --persistent-peers 3f2c…@203.0.113.7:26656,9a1b…@198.51.100.4:26656 --bootstrap /ip4/203.0.113.7/tcp/4001/p2p/12D3KooW…`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireHome(home); err != nil {
				return err
			}
			cfg := node.Default(node.Role(role))
			cfg.Home = home
			fs := cmd.Flags()
			follow := cf.follows()
			if follow {
				if err := cf.check(cfg.Role); err != nil {
					return err
				}
			}
			// Everything that can refuse is checked before anything is
			// written, so a refused flag leaves the home as it was.
			if _, err := os.Stat(filepath.Join(home, node.ConfigFile)); err == nil && !force {
				return fmt.Errorf("config: %s exists (use --force to overwrite)", filepath.Join(home, node.ConfigFile))
			}
			if err := chooseBackend(cmd.OutOrStdout(), &cfg, fs); err != nil {
				return err
			}
			if err := precheckInit(cfg, &nf, fs, cf.p2pListen); err != nil {
				return err
			}
			var fl *follower
			if follow {
				var err error
				if fl, err = initFollower(cmd, &cfg, cf); err != nil {
					return err
				}
			} else {
				listen := cf.p2pListen
				if listen == "" {
					var err error
					if listen, err = freeChainP2P(); err != nil {
						return err
					}
				}
				cfg.Chain.P2PListen = listen
			}
			// After asking --chain-from, so an unreachable node leaves
			// nothing behind.
			if cfg.Role == node.RoleProvider {
				// Serve a generated test model until the operator lists
				// real ones, so a fresh provider runs end to end.
				dir := filepath.Join(home, "models", node.DevnetModelName)
				id, err := node.EnsureDevnetModel(dir)
				if err != nil {
					return err
				}
				cfg.Provider.Models = []node.ModelConfig{node.DevnetModel(filepath.Join("models", node.DevnetModelName), id)}
				fmt.Fprintf(cmd.OutOrStdout(), "generated a test model in %s; list your own in [[provider.models]]\n", dir)
			}
			nf.apply(&cfg, fs)
			if err := node.WriteConfig(cfg, force); err != nil {
				return err
			}
			if err := initKeys(cmd.OutOrStdout(), cfg); err != nil {
				return err
			}
			if follow {
				return printFollowerNext(cmd.OutOrStdout(), cfg, fl)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "start it     %s\n", startCommand(cfg))
			return nil
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "node home directory (required)")
	cmd.Flags().StringVar(&role, "role", "", "validator | provider | gateway (required)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing config.toml (keys are kept)")
	cf.register(cmd.Flags())
	nf.register(cmd.Flags(), "")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

// initKeys creates the peer key and the identity, and prints who the node is.
func initKeys(out io.Writer, cfg node.Config) (err error) {
	pc := cfg.P2PConfig()
	if _, err := p2p.LoadOrCreateKey(pc.KeyFile); err != nil {
		return err
	}
	pid, err := p2p.PeerIDFromKeyFile(pc.KeyFile)
	if err != nil {
		return err
	}
	// identity.Open's errors carry their own "identity:" prefix.
	id, err := identity.Open(cfg.HWKeyConfig())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, id.Close()) }() // a TPM key flushes its handle here
	fmt.Fprintf(out, "wrote %s/%s\n", cfg.Home, node.ConfigFile)
	fmt.Fprintf(out, "role         %s\n", cfg.Role)
	fmt.Fprintf(out, "peer id      %s\n", pid)
	fmt.Fprintf(out, "machine id   %s\n", id.MachineID())
	fmt.Fprintf(out, "key backend  %s\n", describeBackend(string(id.Backend())))
	return nil
}

func describeBackend(b string) string {
	switch b {
	case "tpm":
		return "tpm (hardware TPM)"
	case "tpm-sim":
		return "tpm-sim (TPM simulator: for devnets and tests, not hardware)"
	case "software":
		return "software (key file: NOT hardware-backed)"
	}
	return b
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
)

func newJoinCmd() *cobra.Command {
	var (
		home string
		nf   nodeFlags
	)
	cmd := &cobra.Command{
		Use:   "join --bootstrap MULTIADDR [--home DIR]",
		Short: "Join a network as a gateway on this machine",
		Long: `join starts a gateway node on your own machine: it follows the network's gossip,
finds providers through the DHT, and serves the API on localhost. Your access
token never leaves this machine.

On first use it writes a gateway config under --home (default ~/.tenzrod/join)
with a software identity key; later runs reuse it, and flags override it.`,
		Example: "  tenzrod join --bootstrap /ip4/203.0.113.7/tcp/4001/p2p/12D3KooW...",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := node.Load(home)
			switch {
			case err == nil:
			case errors.Is(err, os.ErrNotExist):
				if !cmd.Flags().Changed("bootstrap") {
					return fmt.Errorf("--bootstrap is required the first time (no config at %s)", filepath.Join(home, node.ConfigFile))
				}
				cfg = node.Default(node.RoleGateway)
				cfg.Home = home
				cfg.P2P.Listen = []string{"/ip4/0.0.0.0/tcp/0", "/ip4/0.0.0.0/udp/0/quic-v1"}
				nf.apply(&cfg, cmd.Flags())
				if err := node.WriteConfig(cfg, false); err != nil {
					return err
				}
				if err := initKeys(cmd.OutOrStdout(), cfg); err != nil {
					return err
				}
			default:
				return err
			}
			if cfg.Role != node.RoleGateway {
				return fmt.Errorf("config: role: %s is a %s home; join runs a gateway", home, cfg.Role)
			}
			nf.apply(&cfg, cmd.Flags())
			return runNode(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&home, "home", defaultHome("join"), "gateway home directory")
	nf.register(cmd.Flags())
	return cmd
}

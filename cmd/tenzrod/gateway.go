package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
)

// newGatewayCmd builds `tenzrod gateway`: the start of an existing gateway
// home, as `join` runs it once the home exists, so a service manager (the
// systemd unit, the container) starts a gateway the way it starts the
// other roles, never through join's first-run set-up.
func newGatewayCmd() *cobra.Command {
	var (
		home string
		nf   nodeFlags
	)
	cmd := &cobra.Command{
		Use:   "gateway --home DIR",
		Short: "Run a gateway node",
		Long: `Runs a gateway: follows the network's gossip, finds providers through the DHT,
routes OpenAI API calls to them and, when its home follows a chain, pays for
them from the buyer's escrow. It runs what ` + "`tenzrod join --home DIR`" + ` runs once the
home exists; it never sets one up.

The config is read from HOME/config.toml (create it with ` + "`tenzrod init --role gateway`" + `
or a first ` + "`tenzrod join`" + `); flags override it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadRoleHome(home, node.RoleGateway)
			if err != nil {
				return err
			}
			nf.apply(&cfg, cmd.Flags())
			if !cfg.Chain.Enabled && len(cfg.Router.Buyers) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s.\n%s\n", noChain(home), howToPay)
			}
			return runJoined(cmd.Context(), cmd.OutOrStdout(), cfg, 0)
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "node home directory (required)")
	nf.register(cmd.Flags(), node.RoleGateway)
	return cmd
}

// startCommand is how the node of cfg is started once its home exists.
func startCommand(cfg node.Config) string {
	return fmt.Sprintf("tenzrod %s --home %s", cfg.Role, cfg.Home)
}

package main

import (
	"fmt"
	"io"
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
	)
	cmd := &cobra.Command{
		Use:   "init --home DIR --role validator|provider|gateway",
		Short: "Write a commented default config and create the node's keys",
		Long: `init writes HOME/config.toml with every key commented, creates the libp2p
peer key, and creates (or opens) the hardware identity key, then prints the
node's peer ID, machine ID and key backend.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireHome(home); err != nil {
				return err
			}
			cfg := node.Default(node.Role(role))
			cfg.Home = home
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
			nf.apply(&cfg, cmd.Flags())
			if err := node.WriteConfig(cfg, force); err != nil {
				return err
			}
			return initKeys(cmd.OutOrStdout(), cfg)
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "node home directory (required)")
	cmd.Flags().StringVar(&role, "role", "", "validator | provider | gateway (required)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing config.toml (keys are kept)")
	nf.register(cmd.Flags())
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

// initKeys creates the peer key and the identity, and prints who the node is.
func initKeys(out io.Writer, cfg node.Config) error {
	pc := cfg.P2PConfig()
	if _, err := p2p.LoadOrCreateKey(pc.KeyFile); err != nil {
		return err
	}
	pid, err := p2p.PeerIDFromKeyFile(pc.KeyFile)
	if err != nil {
		return err
	}
	id, err := identity.Open(cfg.HWKeyConfig())
	if err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	defer id.Close()
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

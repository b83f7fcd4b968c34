package main

import (
	"crypto/x509"
	"encoding/hex"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Show the node's keys",
	}
	var home string
	show := &cobra.Command{
		Use:   "show --home DIR",
		Short: "Show the peer ID, machine ID, key backend and public keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireHome(home); err != nil {
				return err
			}
			cfg, err := node.Load(home)
			if err != nil {
				return err
			}
			pid, err := p2p.PeerIDFromKeyFile(cfg.P2PConfig().KeyFile)
			if err != nil {
				return err
			}
			id, err := identity.Open(cfg.HWKeyConfig())
			if err != nil {
				return fmt.Errorf("identity: %w", err)
			}
			defer id.Close()
			hw, err := x509.MarshalPKIXPublicKey(id.HWPublicKey())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "peer id            %s\n", pid)
			fmt.Fprintf(out, "machine id         %s\n", id.MachineID())
			fmt.Fprintf(out, "key backend        %s\n", describeBackend(string(id.Backend())))
			fmt.Fprintf(out, "hardware key       P-256 %s\n", hex.EncodeToString(hw))
			pq, _ := id.PQPublicKey().MarshalBinary()
			fmt.Fprintf(out, "ml-dsa-65 key      %s… (%d bytes)\n", hex.EncodeToString(pq[:16]), len(pq))
			return nil
		},
	}
	show.Flags().StringVar(&home, "home", "", "node home directory (required)")
	cmd.AddCommand(show)
	return cmd
}

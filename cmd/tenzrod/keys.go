package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Show the node's keys; create and show chain account keys",
	}
	var home string
	show := &cobra.Command{
		Use:   "show --home DIR",
		Short: "Show the peer ID, machine ID, key backend and public keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
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
				return err // prefixed "identity:" by identity.Open
			}
			defer func() { err = errors.Join(err, id.Close()) }() // a TPM key flushes its handle here
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
	cmd.AddCommand(show, newAccountKeysCmd(), newBuyerKeysCmd())
	return cmd
}

// newAccountKeysCmd is `keys account`: Ed25519 chain account keys.
func newAccountKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Chain account keys (Ed25519; the account ID is the public key in hex)",
	}
	var out string
	create := &cobra.Command{
		Use:   "new --out FILE",
		Short: "Create an account key (PKCS #8 PEM, mode 0600) and print its account ID",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			priv, err := consensus.NewAccountKey(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account            %s\nkey file           %s\n",
				terms.AccountOf(priv.Public().(ed25519.PublicKey)), out)
			return nil
		},
	}
	create.Flags().StringVar(&out, "out", "", "file to write the key to; never overwritten (required)")
	showKey := &cobra.Command{
		Use:   "show FILE",
		Short: "Print the account ID of an account key file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			priv, err := consensus.ReadAccountKey(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "account            %s\n", terms.AccountOf(priv.Public().(ed25519.PublicKey)))
			return nil
		},
	}
	cmd.AddCommand(create, showKey)
	return cmd
}

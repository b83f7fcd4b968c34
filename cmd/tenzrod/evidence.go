package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func newEvidenceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Export and verify evidence packs of an account's payments; write a dispute's evidence",
		Long: `An evidence pack holds an account's settled payment records in a span of
heights, a proof that they are all of them, and a block header signed by
> 2/3 of validator power that certifies the proof. It is checked offline.
A record a conviction reversed shows the reversal.

dispute writes the evidence of one paid optimistic answer, from what its
gateway kept, as the file 'tx dispute open --evidence' takes.`,
	}
	var (
		api, account, out string
		from, to          int64
	)
	export := &cobra.Command{
		Use:   "export --api URL --account ACCOUNT --from H --to H --out FILE",
		Short: "Fetch an evidence pack from a node (tenzro_getEvidencePack) and write it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := terms.ParseAccountID(account); err != nil {
				return fmt.Errorf("--account: %w", err)
			}
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			c, err := shell.NewClient(api)
			if err != nil {
				return err
			}
			raw, err := c.Call(cmd.Context(), "tenzro_getEvidencePack",
				map[string]any{"account": account, "from_height": from, "to_height": to})
			if err != nil {
				return err
			}
			var pack evidence.Pack
			if err := json.Unmarshal(raw, &pack); err != nil {
				return fmt.Errorf("the node's answer is not an evidence pack: %w", err)
			}
			if err := pack.WriteFile(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: account %s, heights %d..%d\nverify it offline with: tenzrod evidence verify %s --validators GENESIS-OR-VALIDATOR-SET\n",
				out, account, from, to, out)
			return nil
		},
	}
	f := export.Flags()
	f.StringVar(&api, "api", "http://127.0.0.1:8545", "node API URL")
	f.StringVar(&account, "account", "", "payer account ID (64 hex digits)")
	f.Int64Var(&from, "from", 1, "first settlement height")
	f.Int64Var(&to, "to", 0, "last settlement height (committed)")
	f.StringVar(&out, "out", "", "file to write the pack to")

	var validators string
	verify := &cobra.Command{
		Use:   "verify FILE --validators FILE",
		Short: "Check an evidence pack with no network and print what it proves",
		Long: `verify checks the pack against a validator set you already trust: the chain's
genesis.json, or a validator set file. It needs no network. It exits non-zero
when any check fails and names the check.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if validators == "" {
				return fmt.Errorf("--validators is required (the chain's genesis.json or a validator set file)")
			}
			trusted, err := evidence.LoadValidatorSet(validators)
			if err != nil {
				return err
			}
			pack, err := evidence.ReadFile(args[0])
			if err != nil {
				return err
			}
			rep, err := evidence.Verify(pack, trusted)
			if err != nil {
				return fmt.Errorf("%s does NOT verify: %w", args[0], err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep.String())
			return nil
		},
	}
	verify.Flags().StringVar(&validators, "validators", "", "trusted validator set: genesis.json or a validator set file (required)")
	cmd.AddCommand(export, verify, newEvidenceDisputeCmd())
	return cmd
}

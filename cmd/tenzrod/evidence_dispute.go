package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
)

// newEvidenceDisputeCmd is `tenzrod evidence dispute`: the evidence file of
// a paid optimistic answer, from what its gateway kept, ready for `tx
// dispute open --evidence`.
func newEvidenceDisputeCmd() *cobra.Command {
	var api, request, out, token string
	cmd := &cobra.Command{
		Use:   "dispute --api URL --request DIGEST [--out FILE] [--token TOKEN]",
		Short: "Write the dispute evidence of a paid optimistic answer, from what its gateway kept",
		Long: `dispute fetches from the gateway that routed the call (tenzro_getDisputeEvidence)
everything a dispute of its optimistic answer needs: the provider's signed
receipt, its commitment proofs, the generated token IDs and the request's
input, exactly as the receipt signs them. It writes them as the JSON file
that 'tenzrod tx dispute open --evidence' takes, and prints that command.

DIGEST is the call's request digest: the response's
tenzro.payment.signed.request_digest, or tenzro_listRecentRequests'
request_digest. The evidence holds your prompt, so the gateway answers only
your buyer token (--token, default $TENZRO_TOKEN) or its admin token; the
file is written readable by you only. A record can be disputed once it
settled on chain; the command says whether it has, and fails if the
chain's own evidence check, run by the gateway first, would refuse it.`,
		Example: `  tenzrod evidence dispute --api http://127.0.0.1:8545 --request 9f…3b --out evidence.json
  tenzrod tx dispute open --key me.key --payer 5e…a1 --request 9f…3b --evidence evidence.json --bond 10_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := consensus.ParseHash(request); err != nil {
				return fmt.Errorf("--request: the call's request digest (tenzro.payment.signed.request_digest): %w", err)
			}
			if out == "" {
				out = "evidence-" + request[:16] + ".json"
			}
			c, err := shell.NewClient(api)
			if err != nil {
				return err
			}
			c.SetToken(token)
			raw, err := c.Call(cmd.Context(), "tenzro_getDisputeEvidence", node.DisputeEvidenceParams{Request: request})
			if err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			var res node.DisputeEvidenceResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("evidence dispute: the node's answer is not dispute evidence: %w", err)
			}
			if res.Problem != "" {
				return fmt.Errorf("evidence dispute: the chain would refuse this evidence for request %s: %s", request, res.Problem)
			}
			b, err := json.MarshalIndent(res.Evidence, "", "  ")
			if err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			if err := os.WriteFile(out, append(b, '\n'), 0o600); err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			printDisputeNext(cmd.OutOrStdout(), &res, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&api, "api", "http://127.0.0.1:8545", "API URL of the gateway that routed the call")
	f.StringVar(&request, "request", "", "the call's request digest, 64 hex digits (required)")
	f.StringVar(&out, "out", "", "file to write (default evidence-DIGEST_PREFIX.json)")
	f.StringVar(&token, "token", os.Getenv("TENZRO_TOKEN"), "your buyer token, or the gateway's admin token (default $TENZRO_TOKEN)")
	return cmd
}

// printDisputeNext says what was written and the command that opens the
// dispute with it.
func printDisputeNext(w io.Writer, res *node.DisputeEvidenceResult, file string) {
	fmt.Fprintf(w, "wrote %s: request %s of payer %s, served by %s (model %s): receipt, proofs, %d token IDs, input\n",
		file, res.RequestDigest, res.Payer, res.Provider, res.Model, len(res.Evidence.Tokens))
	switch {
	case res.Settled == nil:
		fmt.Fprintln(w, "this node has no chain: check the record settled (tenzro_getPayments) before opening the dispute")
	case !*res.Settled:
		fmt.Fprintln(w, "the record is not settled yet: a dispute opens only once it is (its provider or gateway settles it within minutes)")
	default:
		fmt.Fprintf(w, "the record settled at height %d, and the chain's evidence check passes\n", res.SettledHeight)
	}
	fmt.Fprintf(w, "open the dispute (the bond is at least the chain's dispute_min_bond, tenzro_getParams):\n  tenzrod tx dispute open --key YOUR_ACCOUNT_KEY --payer %s --request %s --evidence %s --bond N\n",
		res.Payer, res.RequestDigest, file)
}

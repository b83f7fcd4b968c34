package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// newEvidenceDisputeCmd is `tenzrod evidence dispute`: the evidence file of
// a paid optimistic answer, from what its gateway kept, naming the chunk
// to dispute, ready for `tx dispute open --evidence`.
func newEvidenceDisputeCmd() *cobra.Command {
	var api, request, out, token, modelDir string
	var chunk int
	var force bool
	cmd := &cobra.Command{
		Use:   "dispute --api URL --request DIGEST [--model DIR [--force] | --chunk N] [--out FILE] [--token TOKEN]",
		Short: "Write the dispute evidence of a paid optimistic answer, from what its gateway kept",
		Long: `dispute fetches from the gateway that routed the call (tenzro_getDisputeEvidence)
everything a dispute of its optimistic answer needs: the provider's signed
receipt, its commitment proofs, the generated token IDs and the request's
input, exactly as the receipt signs them. It writes them as the JSON file
that 'tenzrod tx dispute open --evidence' takes, and prints that command
with the least bond the chain takes for it.

A dispute names one commitment chunk (32 generated tokens): the committee
re-executes the answer up to that chunk's end and judges that chunk alone.
Naming a chunk that verifies acquits the provider and loses your bond, and
the bond grows with the chunk, so name the first that fails. --model DIR
finds it: DIR is your copy of the model's weights (a model directory as
'tenzrod model gen' or a validator's [[validator.models]] holds), on which
every chunk is judged exactly as a committee member judges it. If every
chunk verifies, nothing is written (the dispute would lose its bond) unless
--force. --chunk N names a chunk by hand; without either, chunk 0.

DIGEST is the call's request digest: the response's
tenzro.payment.signed.request_digest, or tenzro_listRecentRequests'
request_digest. The evidence holds your prompt, so the gateway answers only
your buyer token (--token, default $TENZRO_TOKEN) or its admin token; the
file is written readable by you only. A record can be disputed once it
settled on chain; the command says whether it has, and fails if the
chain's own evidence check, run by the gateway first, would refuse it.`,
		Example: `  tenzrod evidence dispute --api http://127.0.0.1:8545 --request 9f…3b --model ~/models/devnet --out evidence.json
  tenzrod tx dispute open --key me.key --payer 5e…a1 --request 9f…3b --evidence evidence.json --bond 10_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := terms.ParseHash(request); err != nil {
				return fmt.Errorf("--request: the call's request digest (tenzro.payment.signed.request_digest): %w", err)
			}
			byHand := cmd.Flags().Changed("chunk")
			if byHand && modelDir != "" {
				return errors.New("evidence dispute: give --model (to find the failing chunk) or --chunk, not both")
			}
			if out == "" {
				out = "evidence-" + request[:16] + ".json"
			}
			c, err := shell.NewClient(api)
			if err != nil {
				return err
			}
			c.SetToken(token)
			raw, err := c.Call(cmd.Context(), "tenzro_getDisputeEvidence", gatewayapi.DisputeEvidenceParams{Request: request})
			if err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			var res gatewayapi.DisputeEvidenceResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("evidence dispute: the node's answer is not dispute evidence: %w", err)
			}
			if res.Problem != "" {
				return fmt.Errorf("evidence dispute: the chain would refuse this evidence for request %s: %s", request, res.Problem)
			}
			var note string
			switch {
			case byHand:
				if err := checkChunk(chunk, len(res.Evidence.Tokens)); err != nil {
					return err
				}
				note = fmt.Sprintf("chunk %d, named by hand: a dispute naming a chunk that verifies loses its bond", chunk)
			case modelDir != "":
				if chunk, note, err = findChunk(cmd.Context(), modelDir, res.Evidence, force); err != nil {
					return err
				}
			default:
				chunk = 0
				note = "chunk 0, not checked: a dispute naming a chunk that verifies loses its bond; " +
					"--model DIR (your copy of the weights) finds the first chunk that fails"
			}
			res.Evidence.Chunk = uint32(chunk)
			b, err := json.MarshalIndent(res.Evidence, "", "  ")
			if err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			if err := os.WriteFile(out, append(b, '\n'), 0o600); err != nil {
				return fmt.Errorf("evidence dispute: %w", err)
			}
			printDisputeNext(cmd.OutOrStdout(), &res, out, note, disputeBond(cmd.Context(), c, &res))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&api, "api", "http://127.0.0.1:8545", "API URL of the gateway that routed the call")
	f.StringVar(&request, "request", "", "the call's request digest, 64 hex digits (required)")
	f.StringVar(&out, "out", "", "file to write (default evidence-DIGEST_PREFIX.json)")
	f.StringVar(&token, "token", os.Getenv("TENZRO_TOKEN"), "your buyer token, or the gateway's admin token (default $TENZRO_TOKEN)")
	f.StringVar(&modelDir, "model", "", "your copy of the model's weights (model directory): find the first chunk that fails on them")
	f.BoolVar(&force, "force", false, "with --model, write the evidence (chunk 0) even when every chunk verifies")
	f.IntVar(&chunk, "chunk", 0, "the commitment chunk to dispute, by hand (0 is the answer's first 32 tokens)")
	return cmd
}

// checkChunk refuses a chunk past the answer's last, as the chain would at
// decode: the proofs cover one step per token, 32 to a chunk.
func checkChunk(chunk, tokens int) error {
	chunks := (tokens + commit.StepsPerChunk - 1) / commit.StepsPerChunk
	if chunk < 0 || chunk >= chunks {
		return fmt.Errorf("evidence dispute: --chunk %d: the answer's %d tokens make chunks 0 to %d", chunk, tokens, chunks-1)
	}
	return nil
}

// findChunk judges the evidence on the weights in dir (loaded as a
// validator loads its [[validator.models]]) and returns the first chunk
// that fails, with a note saying why; when none fails it refuses unless
// force, since the committee, holding the same weights, would acquit.
func findChunk(ctx context.Context, dir string, ev ledger.DisputeEvidence, force bool) (int, string, error) {
	engines, err := validator.LoadModels([]validator.ModelConfig{{Name: dir, Dir: dir}}, func(p string) string { return p })
	if err != nil {
		return 0, "", fmt.Errorf("evidence dispute: --model: %w", err)
	}
	var eng inference.Engine
	for _, e := range engines {
		eng = e
	}
	chunk, why, err := validator.FirstFailingChunk(ctx, eng, ev)
	switch {
	case err != nil:
		return 0, "", fmt.Errorf("evidence dispute: %w", err)
	case chunk < 0 && !force:
		return 0, "", fmt.Errorf("evidence dispute: the answer verifies against your copy of the weights: a dispute would lose its bond (%s); --force writes it anyway", why)
	case chunk < 0:
		return 0, "chunk 0, forced: every chunk verifies against your copy of the weights, so a committee holding them acquits and the bond is lost", nil
	}
	return chunk, fmt.Sprintf("chunk %d, the first that fails against your copy of the weights: %s", chunk, why), nil
}

// disputeBond is the least bond the chain takes for the evidence's chunk
// (ledger.DisputeBond of the chain's params and the record's price), 0
// when the gateway has no chain or the record has not settled.
func disputeBond(ctx context.Context, c *shell.Client, res *gatewayapi.DisputeEvidenceResult) uint64 {
	if res.Settled == nil || !*res.Settled {
		return 0
	}
	var p ledger.Params
	if err := callInto(ctx, c, "tenzro_getParams", nil, &p); err != nil {
		return 0
	}
	return ledger.DisputeBond(p, res.Price, res.Evidence.Chunk)
}

// printDisputeNext says what was written, which chunk it names and why,
// and the command that opens the dispute with it, at bond when known.
func printDisputeNext(w io.Writer, res *gatewayapi.DisputeEvidenceResult, file, note string, bond uint64) {
	fmt.Fprintf(w, "wrote %s: request %s of payer %s, served by %s (model %s): receipt, proofs, %d token IDs, input\n",
		file, res.RequestDigest, res.Payer, res.Provider, res.Model, len(res.Evidence.Tokens))
	fmt.Fprintf(w, "disputed %s\n", note)
	switch {
	case res.Settled == nil:
		fmt.Fprintln(w, "this node has no chain: check the record settled (tenzro_getPayments) before opening the dispute")
	case !*res.Settled:
		fmt.Fprintln(w, "the record is not settled yet: a dispute opens only once it is (its provider or gateway settles it within minutes)")
	default:
		fmt.Fprintf(w, "the record settled at height %d, price %d, and the chain's evidence check passes\n", res.SettledHeight, res.Price)
	}
	amount := "N"
	if bond > 0 {
		amount = fmt.Sprint(bond)
		fmt.Fprintf(w, "open the dispute (least bond for chunk %d: dispute_bond_bp of the price per chunk up to it, at least dispute_min_bond):\n", res.Evidence.Chunk)
	} else {
		fmt.Fprintln(w, "open the dispute (the bond is at least dispute_bond_bp of the record's price per chunk up to the one named, and dispute_min_bond; tenzro_getParams):")
	}
	fmt.Fprintf(w, "  tenzrod tx dispute open --key YOUR_ACCOUNT_KEY --payer %s --request %s --evidence %s --bond %s\n",
		res.Payer, res.RequestDigest, file, amount)
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newTxModelCmd is `tenzrod tx model`: a validator's declaration of the
// weights it holds.
func newTxModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Declare (or drop) a model's weights a validator holds, to sit on its dispute committees",
	}
	var (
		o     txOpts
		model string
		drop  bool
	)
	declare := &cobra.Command{
		Use:     "declare --key VALIDATOR_ACCOUNT_KEY --model ID [--drop]",
		Short:   "Declare that this validator holds model ID's weights (--drop: no longer)",
		Example: "  tenzrod tx model declare --key ~/.tenzrod/validator/account.key --model 5f…2c",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := requiredFlag("model", model, "the catalog model ID (64 hex digits)", terms.ParseHash)
			if err != nil {
				return err
			}
			what := "declare holding model " + id.String()
			if drop {
				what = "drop model " + id.String()
			}
			return o.submit(cmd, what, &ledger.ModelDeclare{ModelID: id, Holds: !drop})
		},
	}
	o.register(declare)
	declare.Flags().StringVar(&model, "model", "", "catalog model ID, 64 hex digits (required)")
	declare.Flags().BoolVar(&drop, "drop", false, "withdraw the declaration")
	cmd.AddCommand(declare)
	return cmd
}

// newTxDisputeCmd is `tenzrod tx dispute`: open a dispute, vote on one.
func newTxDisputeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dispute",
		Short: "Dispute a settled optimistic answer, or vote on a dispute as a committee member",
		Long: `open bonds --bond micro-units against a settled record (--payer, --request)
whose optimistic answer does not match the weights: --evidence is the JSON
file 'tenzrod evidence dispute' writes from what the gateway kept
{"receipt": base64 envelope, "proofs": base64, "tokens": [ids], "input": base64}.
The chain checks the receipt is the one settled and the proofs are the ones
it signs. With --batch it disputes an expert batch a serving provider kept
as evidence instead (see open --help). The next block's hash seeds a committee of validators holding the
model (never the accused operator). The dispute ID is printed.

vote is a member's vote: --commit first (within the commit phase), then
--reveal with the same --verdict and --salt once the commit phase ended.
tenzro_getDispute shows the phases, the committee and the evidence.`,
	}
	cmd.AddCommand(newTxDisputeOpenCmd(), newTxDisputeVoteCmd())
	return cmd
}

func newTxDisputeOpenCmd() *cobra.Command {
	var (
		o                      txOpts
		payer, request, evFile string
		batch, binding         string
		bond                   amountFlag
	)
	cmd := &cobra.Command{
		Use:   "open --key FILE (--payer ACCOUNT --request DIGEST --evidence FILE | --batch FILE [--binding FILE]) --bond N",
		Short: "Open a dispute over a settled record's optimistic answer or an expert batch; prints the dispute ID",
		Long: `An optimistic answer, from the call to the verdict:

 1. Evidence. 'tenzrod evidence dispute --api GATEWAY --request DIGEST
    --model DIR --out evidence.json' writes it from what the gateway that
    routed the call kept (with your buyer token; DIGEST is the response's
    tenzro.payment.signed.request_digest). It is exactly what the provider
    signed: the receipt envelope, the commitment proofs and the generated
    token IDs (the response's tenzro.receipt: envelope, commitment,
    token_ids), and the input, the request as the provider committed to it
    ({"chat", "messages", "prompt", "continuation", "sampling"} JSON, base64),
    which only the gateway holds as sent. Nothing is written by hand.
    It also names the disputed chunk (32 generated tokens): the first that
    fails when every chunk is judged on DIR, your copy of the model's
    weights, as a committee member judges it; if none fails it writes
    nothing, since the dispute would lose its bond. Without --model it names
    chunk 0 unchecked (or --chunk N).
 2. Open. Once the record settled, and within dispute_window_blocks of it:
    --payer and --request name the record, --evidence the file, --bond the
    micro-units you put at stake: at least dispute_bond_bp of the record's
    price per chunk up to the one named, and dispute_min_bond (both in
    tenzro_getParams); 'evidence dispute' prints that least bond.
 3. Refused in its block, bond untouched: evidence that is not what the
    receipt signs (bad evidence: other tokens, proofs or input), a record not
    settled or past the window, a subject already disputed, a model no
    validator but the accused's operator holds.
 4. Committee. The next block's hash seeds a draw, by stake, of validators
    that declared the model's weights (never the accused operator). They
    re-execute the signed tokens by prefill up to the named chunk's end and
    judge that chunk alone (one that verifies acquits), then commit and
    reveal votes within dispute_verdict_blocks; tenzro_getDispute shows
    every step.
 5. Verdict (>= 2/3 of the committee's stake):
    guilty: dispute_slash_bp of the provider's bond is slashed,
      dispute_reward_bp of it paid to you with your bond, the rest burned;
      the whole price the buyer paid returns to its escrow, once per record
      (the operator's credit as far as it holds it, the rest out of the
      slash); the provider's standing is 0 for dispute_standing_hours;
    innocent: your bond goes to the provider's operator;
    no verdict (after a second draw of 2k+1): your bond comes back.

An expert batch: --batch is an evidence file a serving provider kept
(HOME/experts/evidence/MODEL/*.cbor: the batch, its holder's signed
receipt and the output recomputed elsewhere), and --binding the file
naming the record that paid the holder for the call and the call's
receipts (default: the newest in HOME/experts/bindings/MODEL for the
batch's receipt). A serving provider with provider.remote_experts.dispute
on opens these itself once the record settled.`,
		Example: `  tenzrod evidence dispute --api http://127.0.0.1:8545 --request 9f…3b --model ~/models/devnet --out evidence.json
  tenzrod tx dispute open --key me.key --payer 5e…a1 --request 9f…3b --evidence evidence.json --bond 10_000_000
  tenzrod tx dispute open --key ~/.tenzrod/account.key --batch ~/.tenzrod/experts/evidence/1a2b…/00000000000000000003-9c….cbor --bond 10_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := bond.required("bond")
			if err != nil {
				return err
			}
			var open *ledger.DisputeOpen
			if batch != "" {
				if payer != "" || request != "" || evFile != "" {
					return fmt.Errorf("--batch names its record through the binding: give no --payer, --request or --evidence with it")
				}
				if open, err = batchDisputeOpen(batch, binding, b); err != nil {
					return err
				}
			} else {
				if binding != "" {
					return fmt.Errorf("--binding goes with --batch")
				}
				if open, err = recordDisputeOpen(payer, request, evFile, b); err != nil {
					return err
				}
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			subj := open.Subject
			what := fmt.Sprintf("dispute request %s of %s with bond %d", subj.RequestDigest, subj.Payer, b)
			if subj.Batch != nil {
				what = fmt.Sprintf("dispute layer %d expert %d of request %s of %s with bond %d",
					subj.Batch.Layer, subj.Batch.Expert, subj.RequestDigest, subj.Payer, b)
			}
			if err := s.submit(what, open); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%-10s %s\n", "dispute", ledger.DisputeID(subj))
			return nil
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&payer, "payer", "", "the disputed record's payer account")
	f.StringVar(&request, "request", "", "the disputed record's request digest, 64 hex digits")
	f.StringVar(&evFile, "evidence", "", "JSON file 'tenzrod evidence dispute' writes: receipt, proofs, tokens, input, and chunk (the first 32-step chunk that fails for you; default 0)")
	f.StringVar(&batch, "batch", "", "an expert batch's evidence file (CBOR, as a serving provider keeps it)")
	f.StringVar(&binding, "binding", "", "with --batch: the binding file (default: found in the home beside the evidence)")
	f.Var(&bond, "bond", "micro-units bonded, at least the chain's dispute_min_bond and dispute_bond_bp of the record's price per chunk up to the one named (required)")
	return cmd
}

// recordDisputeOpen is the dispute of a settled record's optimistic answer.
func recordDisputeOpen(payer, request, evFile string, bond uint64) (*ledger.DisputeOpen, error) {
	p, err := accountFlag("payer", payer)
	if err != nil {
		return nil, err
	}
	if p == (terms.AccountID{}) {
		return nil, fmt.Errorf("--payer is required: the record's payer account (or --batch for an expert batch)")
	}
	d, err := terms.ParseHash(request)
	if err != nil {
		return nil, fmt.Errorf("--request: the record's request digest: %w", err)
	}
	if evFile == "" {
		return nil, fmt.Errorf("--evidence is required: the file 'tenzrod evidence dispute --request DIGEST' writes (receipt, proofs, tokens, input)")
	}
	raw, err := os.ReadFile(evFile)
	if err != nil {
		return nil, fmt.Errorf("--evidence: %w", err)
	}
	var ev ledger.DisputeEvidence
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("--evidence %s: %w", evFile, err)
	}
	return &ledger.DisputeOpen{Subject: ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: p, RequestDigest: d}, Evidence: ev, Bond: bond}, nil
}

func newTxDisputeVoteCmd() *cobra.Command {
	var (
		o                    txOpts
		id, verdict, saltHex string
		round                uint8
		commit, reveal       bool
	)
	cmd := &cobra.Command{
		Use:   "vote --key VALIDATOR_ACCOUNT_KEY --id DISPUTE --round N --verdict guilty|innocent|abstain --salt HEX (--commit | --reveal)",
		Short: "Commit to, then reveal, a committee member's verdict",
		Example: `  tenzrod tx dispute vote --key account.key --id 0b…7f --round 1 --verdict guilty --salt $(openssl rand -hex 32) --commit
  tenzrod tx dispute vote --key account.key --id 0b…7f --round 1 --verdict guilty --salt SAME_HEX --reveal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			did, err := terms.ParseHash(id)
			if err != nil {
				return fmt.Errorf("--id: %w", err)
			}
			var v ledger.Verdict
			if err := v.UnmarshalText([]byte(verdict)); err != nil || v == ledger.VerdictNone {
				return fmt.Errorf("--verdict %q: want guilty, innocent or abstain", verdict)
			}
			salt, err := terms.ParseHash(saltHex)
			if err != nil {
				return fmt.Errorf("--salt: a secret of 64 hex digits, the same for commit and reveal: %w", err)
			}
			if commit == reveal {
				return fmt.Errorf("give exactly one of --commit and --reveal")
			}
			if round != 1 && round != 2 {
				return fmt.Errorf("--round %d: want 1 or 2", round)
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			vote := &ledger.DisputeVote{ID: did, Round: round}
			if commit {
				vote.Commitment = ledger.VoteCommitment(did, round, s.account, v, salt)
				return s.submit(fmt.Sprintf("commit to a vote on dispute %s round %d", did, round), vote)
			}
			vote.Reveal = &ledger.VoteReveal{Verdict: v, Salt: salt}
			return s.submit(fmt.Sprintf("reveal %s on dispute %s round %d", v, did, round), vote)
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&id, "id", "", "dispute ID, 64 hex digits (required)")
	f.Uint8Var(&round, "round", 1, "committee round, 1 or 2")
	f.StringVar(&verdict, "verdict", "", "guilty | innocent | abstain (required)")
	f.StringVar(&saltHex, "salt", "", "secret salt, 64 hex digits, the same for commit and reveal (required)")
	f.BoolVar(&commit, "commit", false, "send the commitment")
	f.BoolVar(&reveal, "reveal", false, "reveal the committed vote")
	return cmd
}

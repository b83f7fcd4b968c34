package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newTxPlanCmd is `tenzrod tx plan`: open and decide settlement plans.
func newTxPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Open or decide a settlement plan (several payments that succeed or fail together)",
		Long: `A settlement plan pays several legs from one spend escrow, all or none.
open moves --total micro-units out of the escrow's available balance; each
--leg ACCOUNT=BPS gets ⌊total × BPS / 10000⌋, the first leg also the
remainder, so the legs sum to the total exactly; the basis points must sum
to 10000. The escrow's settler signs (a gateway: --payer BUYER; your own
escrow: no flags) and decides.

A plan whose legs are all on this chain commits as it opens: every leg is
paid in that transaction. A leg ACCOUNT=BPS@CHAIN depends on another chain:
the plan then holds the total until decide --commit pays every leg in one
transaction, or decide --abort returns the total to the escrow whole. One
decision only. After --timeout blocks the payer may abort too.

--quote FILE is the quote the job was priced under (its encoding, base64 or
raw): a quote naming a split rule admits only a plan with exactly those
legs. Undecided plans are listed in tenzro_getAccount's "plans".`,
	}
	cmd.AddCommand(newTxPlanOpenCmd(), newTxPlanDecideCmd())
	return cmd
}

// parseLeg parses ACCOUNT=BPS or ACCOUNT=BPS@CHAIN.
func parseLeg(s string) (ledger.PlanLeg, error) {
	acct, rest, ok := strings.Cut(s, "=")
	if !ok {
		return ledger.PlanLeg{}, fmt.Errorf("--leg %q: want ACCOUNT=BPS or ACCOUNT=BPS@CHAIN", s)
	}
	id, err := terms.ParseAccountID(acct)
	if err != nil {
		return ledger.PlanLeg{}, fmt.Errorf("--leg %q: payee is not an account ID (64 hex digits)", s)
	}
	bps, chain, _ := strings.Cut(rest, "@")
	n, err := strconv.ParseUint(bps, 10, 64)
	if err != nil || n == 0 || n > ledger.BasisPoints {
		return ledger.PlanLeg{}, fmt.Errorf("--leg %q: basis points %q, want an integer 1..%d", s, bps, ledger.BasisPoints)
	}
	return ledger.PlanLeg{Payee: id, BPS: n, Chain: chain}, nil
}

// readQuote reads a quote's encoding from a file, base64 or raw bytes.
func readQuote(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--quote: %w", err)
	}
	if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b))); err == nil {
		b = d
	}
	if len(b) > ledger.MaxQuoteBytes {
		return nil, fmt.Errorf("--quote %s: %d bytes, limit %d", path, len(b), ledger.MaxQuoteBytes)
	}
	return b, nil
}

func newTxPlanOpenCmd() *cobra.Command {
	var (
		o              txOpts
		legs           []string
		total          amountFlag
		payer, settler string
		quoteFile      string
		timeout        uint64
	)
	cmd := &cobra.Command{
		Use:   "open --key FILE --leg ACCOUNT=BPS[@CHAIN]... --total N [--payer ACCOUNT] [--settler ACCOUNT] [--quote FILE] [--timeout BLOCKS]",
		Short: "Open a settlement plan from a spend escrow; prints the plan ID and whether it committed",
		Example: `  # 90% to a provider's operator, 10% platform fee, paid at once from your own escrow
  tenzrod tx plan open --key buyer.key --leg 9c…04=9000 --leg 5e…a1=1000 --total 1_000_000
  # a leg on another chain: held until tx plan decide
  tenzrod tx plan open --key buyer.key --leg 9c…04=7000 --leg 5e…a1=3000@other-chain --total 1_000 --timeout 600`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(legs) == 0 {
				return fmt.Errorf("--leg is required: one ACCOUNT=BPS per payee, the basis points summing to %d", ledger.BasisPoints)
			}
			p := &ledger.PlanOpen{TimeoutBlocks: timeout}
			for _, l := range legs {
				leg, err := parseLeg(l)
				if err != nil {
					return err
				}
				p.Legs = append(p.Legs, leg)
			}
			if err := ledger.CheckLegs(p.Legs); err != nil {
				return fmt.Errorf("--leg: %w", err)
			}
			var err error
			if p.Total, err = total.required("total"); err != nil {
				return err
			}
			if p.Payer, err = accountFlag("payer", payer); err != nil {
				return err
			}
			if p.Settler, err = accountFlag("settler", settler); err != nil {
				return err
			}
			if quoteFile != "" {
				if p.Quote, err = readQuote(quoteFile); err != nil {
					return err
				}
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("plan open %d micro-units to %d legs", p.Total, len(p.Legs))
			if err := s.submit(what, p); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%-10s %s\n", "plan", ledger.PlanID(s.account, s.sent))
			return nil
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&legs, "leg", nil, "a payee and its share: ACCOUNT=BPS, or ACCOUNT=BPS@CHAIN for a leg on another chain (repeat; required)")
	f.Var(&total, "total", "micro-units the plan pays out, an integer > 0 (required)")
	f.StringVar(&payer, "payer", "", "the escrow's payer (account ID); default: you")
	f.StringVar(&settler, "settler", "", "the escrow's settler (account ID), who must sign; default: you")
	f.StringVar(&quoteFile, "quote", "", "file holding the quote's encoding (base64 or raw) whose split rule the plan must match")
	f.Uint64Var(&timeout, "timeout", 0, "blocks an undecided plan waits before its payer may abort it")
	return cmd
}

func newTxPlanDecideCmd() *cobra.Command {
	var (
		o             txOpts
		id            string
		commit, abort bool
	)
	cmd := &cobra.Command{
		Use:     "decide --key FILE --id PLAN (--commit | --abort)",
		Short:   "Record a plan's one decision: commit pays every leg, abort returns the total to the escrow",
		Example: "  tenzrod tx plan decide --key gateway.key --id 0b…7f --commit",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := requiredFlag("id", id, "the plan ID (64 hex digits) tx plan open printed", terms.ParseHash)
			if err != nil {
				return err
			}
			if commit == abort {
				return fmt.Errorf("give exactly one of --commit and --abort")
			}
			what := "plan abort " + h.String()
			if commit {
				what = "plan commit " + h.String()
			}
			return o.submit(cmd, what, &ledger.PlanDecide{ID: h, Commit: commit})
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&id, "id", "", "plan ID, 64 hex digits (required)")
	f.BoolVar(&commit, "commit", false, "pay every leg")
	f.BoolVar(&abort, "abort", false, "return the total to the escrow")
	return cmd
}

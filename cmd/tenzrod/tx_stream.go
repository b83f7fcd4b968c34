package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newTxStreamCmd is `tenzrod tx stream`: open, claim and stop stream
// escrows.
func newTxStreamCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Open, claim or stop a stream escrow (standby paid by block time)",
		Long: `A stream escrow pays a provider by block time: open moves --deposit
micro-units out of a spend escrow's available balance (balance less pending
withdrawals) into a stream to the operator of the registered machine
--payee, at --rate micro-units per hour. The escrow's settler signs it (a
gateway opening a stream for its buyer, --payer BUYER), or the payer itself
for its own escrow with itself. The stream's ID is printed.

claim, by the payee machine's operator, pays what accrued and was not yet
claimed: min(deposit, ⌊rate × seconds since the open / 3600⌋) − claimed, on
block time. A claim that takes the whole deposit closes the stream.

stop, by the payer or the settler, pays the operator what accrued up to
that block and refunds the rest to the escrow in the same transaction; the
stream is closed and pays nothing more. Open streams are listed in
tenzro_getAccount's "streams".`,
	}
	cmd.AddCommand(newTxStreamOpenCmd(), newTxStreamIDCmd("claim", "Pay the accrued part of a stream to its payee's operator (you)",
		func(id terms.Hash32) any { return &ledger.StreamClaim{ID: id} }),
		newTxStreamIDCmd("stop", "Stop a stream you pay or settle: pay what accrued, refund the rest to the escrow",
			func(id terms.Hash32) any { return &ledger.StreamStop{ID: id} }))
	return cmd
}

// accountFlag parses an optional account flag; "" is the zero account.
func accountFlag(name, s string) (terms.AccountID, error) {
	if s == "" {
		return terms.AccountID{}, nil
	}
	id, err := terms.ParseAccountID(s)
	if err != nil {
		return id, fmt.Errorf("--%s %q: not an account ID (64 hex digits): %w", name, s, err)
	}
	return id, nil
}

// requiredFlag parses the value s of the required flag --name; an empty
// value is refused saying what the flag wants.
func requiredFlag[T any](name, s, wants string, parse func(string) (T, error)) (T, error) {
	var zero T
	if s == "" {
		return zero, fmt.Errorf("--%s is required: %s", name, wants)
	}
	v, err := parse(s)
	if err != nil {
		return zero, fmt.Errorf("--%s: %w", name, err)
	}
	return v, nil
}

func newTxStreamOpenCmd() *cobra.Command {
	var (
		o                     txOpts
		payer, settler, payee string
		rate, deposit         amountFlag
	)
	cmd := &cobra.Command{
		Use:   "open --key FILE --payee MACHINE --rate R --deposit D [--payer ACCOUNT] [--settler ACCOUNT]",
		Short: "Open a stream from a spend escrow to a registered machine's operator; prints the stream ID",
		Example: `  # a buyer streams from its own escrow: 3600 micro-units an hour, 100000 at most
  tenzrod tx stream open --key buyer.key --payee 9c…04 --rate 3600 --deposit 100_000
  # a gateway streams from a buyer's escrow it settles
  tenzrod tx stream open --key gateway.key --payer 5e…a1 --payee 9c…04 --rate 3600 --deposit 100_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := requiredFlag("payee", payee, "the registered machine ID (64 hex digits) whose operator the stream pays", identity.ParseMachineID)
			if err != nil {
				return err
			}
			r, err := rate.required("rate")
			if err != nil {
				return err
			}
			d, err := deposit.required("deposit")
			if err != nil {
				return err
			}
			p, err := accountFlag("payer", payer)
			if err != nil {
				return err
			}
			st, err := accountFlag("settler", settler)
			if err != nil {
				return err
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("stream open %d micro-units at %d per hour to machine %s", d, r, m)
			if err := s.submit(what, &ledger.StreamOpen{Payer: p, Settler: st, Payee: m, Rate: r, Deposit: d}); err != nil {
				return err
			}
			// Zero payer and settler are the signer, as on chain; the ID is
			// known from the signer and the nonce it signed with.
			if p == (terms.AccountID{}) {
				p = s.account
			}
			if st == (terms.AccountID{}) {
				st = s.account
			}
			fmt.Fprintf(s.out, "%-10s %s\n", "stream", ledger.StreamID(s.account, s.sent, p, st, m))
			return nil
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&payee, "payee", "", "registered machine ID whose operator the stream pays, 64 hex digits (required)")
	f.Var(&rate, "rate", "micro-units per hour of block time, an integer > 0 (required)")
	f.Var(&deposit, "deposit", "micro-units moved from the escrow into the stream, an integer > 0 (required)")
	f.StringVar(&payer, "payer", "", "the escrow's payer (account ID); default: you")
	f.StringVar(&settler, "settler", "", "the escrow's settler (account ID), who must sign; default: you")
	return cmd
}

// newTxStreamIDCmd is a stream command whose only argument is --id.
func newTxStreamIDCmd(name, short string, payload func(terms.Hash32) any) *cobra.Command {
	var (
		o  txOpts
		id string
	)
	cmd := &cobra.Command{
		Use:     name + " --key FILE --id STREAM",
		Short:   short,
		Example: "  tenzrod tx stream " + name + " --key account.key --id 0b…7f",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := requiredFlag("id", id, "the stream ID (64 hex digits) tx stream open printed", terms.ParseHash)
			if err != nil {
				return err
			}
			return o.submit(cmd, "stream "+name+" "+h.String(), payload(h))
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&id, "id", "", "stream ID, 64 hex digits (required)")
	return cmd
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
)

// buyerKeyFlags are the settings a key is created or updated with; only
// the flags given change a key on update.
type buyerKeyFlags struct {
	label, duration, prefs string
	budget, perRequest     amountFlag
	concurrent, rate       int
	models                 []string
}

func (f *buyerKeyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.label, "label", "", "a name for the key, shown to its holder (GET /v1/key)")
	fs.Var(&f.budget, "max-budget", "the key's budget per period, in micro-units")
	fs.StringVar(&f.duration, "budget-duration", "", "the period after which the spend resets: 1h, 1d, 30d … (none: the budget never resets)")
	fs.Var(&f.perRequest, "max-per-request", "the most one call may cost at worst, in micro-units")
	fs.IntVar(&f.concurrent, "max-concurrent", 0, "calls in flight at once (0: no key limit)")
	fs.IntVar(&f.rate, "rate-per-minute", 0, "calls a minute (0: no key limit)")
	fs.StringSliceVar(&f.models, "model", nil, "a model the key may call (repeat; none: every model)")
	fs.StringVar(&f.prefs, "preferences", "", `default provider preferences, OpenRouter's provider object as JSON, e.g. '{"ignore":["<peer>"]}'`)
}

// apply sets in s the settings whose flags were given in fs.
func (f *buyerKeyFlags) apply(s *buyerkeys.Settings, fs *pflag.FlagSet) {
	for _, o := range []struct {
		flag string
		set  func()
	}{
		{"label", func() { s.Label = f.label }},
		{"max-budget", func() { s.MaxBudget = f.budget.v }},
		{"budget-duration", func() { s.BudgetDuration = f.duration }},
		{"max-per-request", func() { s.MaxPerRequest = f.perRequest.v }},
		{"max-concurrent", func() { s.MaxConcurrent = f.concurrent }},
		{"rate-per-minute", func() { s.RatePerMinute = f.rate }},
		{"model", func() { s.Models = f.models }},
		{"preferences", func() { s.Preferences = json.RawMessage(f.prefs) }},
	} {
		if fs.Changed(o.flag) {
			o.set()
		}
	}
}

// newBuyerKeysCmd is `keys buyer`: buyer keys managed at run time on a
// gateway, over its API with the operator's admin token.
func newBuyerKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "buyer",
		Short: "Buyer keys of a running gateway: create, list, update, revoke (the operator's admin token, or a payer's token for its keys)",
	}
	var api, token, payer string
	var kf buyerKeyFlags
	client := func() (*shell.Client, error) {
		c, err := shell.NewClient(api)
		if err != nil {
			return nil, err
		}
		c.SetToken(token)
		return c, nil
	}
	call := func(cmd *cobra.Command, method string, params, out any) error {
		c, err := client()
		if err != nil {
			return err
		}
		raw, err := c.Call(cmd.Context(), method, params)
		if err != nil {
			return fmt.Errorf("keys buyer: %w", err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("keys buyer: %s: %w", method, err)
		}
		return nil
	}
	create := &cobra.Command{
		Use:   "create --api URL [--payer ACCOUNT] [--label L] [--max-budget N --budget-duration 30d] [limits]",
		Short: "Create a key paid by ACCOUNT's escrow; its token is printed once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := buyerkeys.CreateParams{Payer: payer}
			kf.apply(&p.Settings, cmd.Flags())
			var out buyerkeys.Created
			if err := call(cmd, "tenzro_createBuyerKey", p, &out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "id      %s\ntoken   %s\n", out.Key.ID, out.Token)
			fmt.Fprintln(w, "The token is shown only now: the gateway keeps its SHA-256.")
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list --api URL",
		Short: "List the keys with their spend this period",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var out []buyerkeys.Status
			if err := call(cmd, "tenzro_listBuyerKeys", nil, &out); err != nil {
				return err
			}
			printBuyerKeys(cmd.OutOrStdout(), out)
			return nil
		},
	}
	update := &cobra.Command{
		Use:   "update ID --api URL [settings to change]",
		Short: "Change a key's settings (the flags given; the rest stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var keys []buyerkeys.Status
			if err := call(cmd, "tenzro_listBuyerKeys", nil, &keys); err != nil {
				return err
			}
			for _, st := range keys {
				if st.Key.ID != args[0] {
					continue
				}
				p := buyerkeys.UpdateParams{ID: args[0], Settings: st.Key.Settings}
				kf.apply(&p.Settings, cmd.Flags())
				var out buyerkeys.Key
				if err := call(cmd, "tenzro_updateBuyerKey", p, &out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "updated %s\n", out.ID)
				return nil
			}
			return fmt.Errorf("keys buyer update: no key %s at %s", args[0], api)
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID --api URL",
		Short: "Revoke a key: its next request is refused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out buyerkeys.Key
			if err := call(cmd, "tenzro_revokeBuyerKey", map[string]string{"id": args[0]}, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", out.ID)
			return nil
		},
	}
	for _, c := range []*cobra.Command{create, list, update, revoke} {
		f := c.Flags()
		f.StringVar(&api, "api", "http://127.0.0.1:8545", "the gateway's API URL")
		f.StringVar(&token, "token", os.Getenv("TENZRO_ADMIN_TOKEN"), "the gateway operator's admin token, or a payer's own [[router.buyers]] token for its keys (default $TENZRO_ADMIN_TOKEN)")
	}
	create.Flags().StringVar(&payer, "payer", "", "the account whose escrow pays the key's calls (off chain: a local account); with a payer's token, that payer")
	kf.register(create.Flags())
	kf.register(update.Flags())
	cmd.AddCommand(create, list, update, revoke)
	return cmd
}

func printBuyerKeys(w io.Writer, keys []buyerkeys.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tPAYER\tSPENT\tBUDGET\tPERIOD\tRESET\tSTATE")
	for _, st := range keys {
		k := st.Key
		budget, period, reset, state := "-", "-", "-", "active"
		if k.MaxBudget > 0 {
			budget = fmt.Sprint(k.MaxBudget)
		}
		if k.BudgetDuration != "" {
			period, reset = k.BudgetDuration, st.Reset.UTC().Format(time.RFC3339)
		}
		if k.Revoked {
			state = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", k.ID, k.Label, k.Payer, st.Spent, budget, period, reset, state)
	}
	_ = tw.Flush()
}

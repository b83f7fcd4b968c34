package main

import (
	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

func newTxRebondCmd() *cobra.Command {
	var (
		o       txOpts
		machine string
		amount  amountFlag
	)
	cmd := &cobra.Command{
		Use:   "rebond --key OPERATOR_KEY --machine ID --amount N",
		Short: "Add to a provider's serving bond; after a conviction, put back what was slashed to be readmitted",
		Long: `rebond moves --amount micro-units from the key's account into the serving bond
of a machine it operates. A machine convicted in a dispute is barred (standing
0, no record paying it settles, every gateway leaves it out) until its
operator re-bonds at least what that conviction slashed (the provider's
rebond_due, shown with barred and convicted_at by tenzro_getStanding) with the bond then at or above the
chain's min_serving_bond; its next records start a new episode.`,
		Example: `  tenzrod tx rebond --key ~/.tenzrod/provider/account.key --machine 9c…41 --amount 100_000_000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := machineFlag(machine)
			if err != nil {
				return err
			}
			amt, err := amount.required("--amount")
			if err != nil {
				return err
			}
			return o.submit(cmd, "re-bond machine "+m.String(), &ledger.ProviderRebond{MachineID: m, Amount: amt})
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&machine, "machine", "", "machine ID of the provider, 64 hex digits (required)")
	cmd.Flags().Var(&amount, "amount", "micro-units to add to the bond (required)")
	return cmd
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus"
)

// newTxCmd is `tenzrod tx`: sign and submit ledger transactions through a
// node's JSON-RPC API.
func newTxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Sign and submit chain transactions: transfers, escrow, provider registration",
		Long: `tx signs a ledger transaction with an account key file, submits it through a
node's JSON-RPC API (tenzro_sendTx), waits until it is committed and prints
its hash, block height, result code and log.

Every command reads the chain ID (tenzro_nodeInfo) and the account's next
nonce (tenzro_getAccount) from the node, so any node running the chain will
do, a follower as well as a validator. Amounts are integer micro-units.

A rejection, by the node before the block (CheckTx) or in the block, exits
non-zero naming the code and the reason; a transaction that fails in a block
still spends its nonce. When a pending transaction of the same account holds
the nonce (a running provider settles with HOME/account.key), tx signs again
once that one commits; --nonce N sends exactly N instead.`,
	}
	cmd.AddCommand(newTxTransferCmd(), newTxEscrowCmd(), newTxRegisterCmd(), newTxUnbondCmd(), newTxWithdrawBondCmd())
	return cmd
}

func newTxTransferCmd() *cobra.Command {
	var (
		o      txOpts
		to     string
		amount amountFlag
	)
	cmd := &cobra.Command{
		Use:   "transfer --key FILE --to ACCOUNT --amount N",
		Short: "Move micro-units from the key's account to another account",
		Long: `transfer moves --amount micro-units from the account of --key to --to (an
account ID: 64 hex digits, as ` + "`tenzrod keys account show`" + ` prints it). A
fresh account exists once it has received a transfer.`,
		Example: `  # on the devnet: fund a fresh operator account from the buyer (any node's API will do)
  API=$(python3 -c 'import json;print(json.load(open(".devnet/devnet.json"))["gateway"])')
  tenzrod keys account new --out op.key
  tenzrod tx transfer --api $API --key .devnet/buyer-account.key \
      --to $(tenzrod keys account show op.key | awk '{print $2}') --amount 2_000_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return fmt.Errorf("--to is required: the receiving account ID (64 hex digits)")
			}
			dst, err := consensus.ParseAccountID(to)
			if err != nil {
				return fmt.Errorf("--to %q: not an account ID (64 hex digits): %w", to, err)
			}
			amt, err := amount.required("amount")
			if err != nil {
				return err
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			return s.submit(fmt.Sprintf("transfer %d micro-units to %s", amt, dst), &consensus.Transfer{To: dst, Amount: amt})
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&to, "to", "", "receiving account ID, 64 hex digits (required)")
	cmd.Flags().Var(&amount, "amount", "micro-units to move, an integer > 0 (required)")
	return cmd
}

func newTxEscrowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escrow",
		Short: "Fund or withdraw the key's spend escrow (what gateways settle calls against)",
		Long: `A buyer's spend escrow pays for inference: gateways and providers settle
payment records against it. fund moves micro-units from the account's balance
into it (optionally naming the gateway account allowed to settle); withdraw
moves them back.`,
	}
	var (
		fo      txOpts
		famount amountFlag
		settler string
	)
	fund := &cobra.Command{
		Use:   "fund --key FILE --amount N [--settler ACCOUNT]",
		Short: "Move micro-units from the balance into the spend escrow",
		Example: `  tenzrod tx escrow fund --key buyer.key --amount 1_000_000
  # let the gateway account settle against it
  tenzrod tx escrow fund --key buyer.key --amount 1_000_000 --settler 3f…e1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			amt, err := famount.required("amount")
			if err != nil {
				return err
			}
			p := &consensus.EscrowFund{Amount: amt}
			if settler != "" {
				if p.Settler, err = consensus.ParseAccountID(settler); err != nil {
					return fmt.Errorf("--settler %q: not an account ID (64 hex digits): %w", settler, err)
				}
			}
			s, err := fo.open(cmd)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("escrow fund %d micro-units", amt)
			if settler != "" {
				what += ", settler " + p.Settler.String()
			}
			return s.submit(what, p)
		},
	}
	fo.register(fund)
	fund.Flags().Var(&famount, "amount", "micro-units to move into the escrow, an integer > 0 (required)")
	fund.Flags().StringVar(&settler, "settler", "", "account ID allowed to settle against the escrow besides you (replaces any earlier one)")

	var (
		wo      txOpts
		wamount amountFlag
	)
	withdraw := &cobra.Command{
		Use:     "withdraw --key FILE --amount N",
		Short:   "Move micro-units from the spend escrow back to the balance",
		Example: `  tenzrod tx escrow withdraw --key buyer.key --amount 400000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			amt, err := wamount.required("amount")
			if err != nil {
				return err
			}
			s, err := wo.open(cmd)
			if err != nil {
				return err
			}
			return s.submit(fmt.Sprintf("escrow withdraw %d micro-units", amt), &consensus.EscrowWithdraw{Amount: amt})
		},
	}
	wo.register(withdraw)
	withdraw.Flags().Var(&wamount, "amount", "micro-units to move back to the balance, an integer > 0 (required)")
	cmd.AddCommand(fund, withdraw)
	return cmd
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newTxCmd is `tenzrod tx`: sign and submit ledger transactions through a
// node's JSON-RPC API.
func newTxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Sign and submit chain transactions: transfers, escrow, stream escrow, settlement plans, disputes, provider registration",
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
	cmd.AddCommand(newTxTransferCmd(), newTxEscrowCmd(), newTxStreamCmd(), newTxPlanCmd(), newTxModelCmd(), newTxDisputeCmd(), newTxSettleCmd(), newTxRegisterCmd(), newTxUnbondCmd(), newTxRebondCmd(), newTxWithdrawBondCmd())
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
		Short: "Move micro-units from the account of --key (it signs and pays) to another account",
		Long: `transfer moves --amount micro-units to --to (an account ID: 64 hex digits,
as ` + "`tenzrod keys account show`" + ` prints it) from the account of --key: that
key signs the transfer and its account funds it (the amount and the
transaction fee). A fresh account exists once it has received a transfer.

On a devnet, fund new accounts from the faucet (.devnet/faucet.key,
faucet_key in devnet.json): a funded genesis account that pays no calls, so
spending from it changes no buyer's escrow or balance.`,
		Example: `  # on the devnet: fund a fresh operator account from the faucet (any node's API will do)
  API=$(python3 -c 'import json;print(json.load(open(".devnet/devnet.json"))["gateway"])')
  tenzrod keys account new --out op.key
  tenzrod tx transfer --api $API --key .devnet/faucet.key \
      --to $(tenzrod keys account show op.key | awk '{print $2}') --amount 2_000_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return fmt.Errorf("--to is required: the receiving account ID (64 hex digits)")
			}
			dst, err := terms.ParseAccountID(to)
			if err != nil {
				return fmt.Errorf("--to %q: not an account ID (64 hex digits): %w", to, err)
			}
			amt, err := amount.required("amount")
			if err != nil {
				return err
			}
			return o.submit(cmd, fmt.Sprintf("transfer %d micro-units to %s", amt, dst), &ledger.Transfer{To: dst, Amount: amt})
		},
	}
	o.register(cmd)
	cmd.Flags().Lookup("key").Usage = "key file of the account that funds the transfer: it signs and pays the amount and the fee (on a devnet: .devnet/faucet.key) (required)"
	cmd.Flags().StringVar(&to, "to", "", "receiving account ID, 64 hex digits (required)")
	cmd.Flags().Var(&amount, "amount", "micro-units to move, an integer > 0 (required)")
	return cmd
}

func newTxEscrowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escrow",
		Short: "Fund, withdraw or claim a spend escrow (what gateways settle calls against)",
		Long: `A buyer's spend escrow pays for inference: each escrow belongs to one
(payer, settler) pair, the settler being the gateway account whose signed
payment records draw on it (default: the payer itself). fund moves
micro-units from the account's balance into it; withdraw starts taking them
back, which pays out only after the chain's withdraw delay (param
withdraw_delay_blocks), so records already signed against the escrow stay
covered; claim pays out a withdrawal once it has unlocked.`,
	}
	fund := newEscrowAmountCmd("fund", "Move micro-units from the balance into the (you, settler) escrow",
		"micro-units to move into the escrow, an integer > 0 (required)",
		func(amt uint64, st terms.AccountID) any { return &ledger.EscrowFund{Amount: amt, Settler: st} })
	fund.Example = `  tenzrod tx escrow fund --key buyer.key --amount 1_000_000
  # the escrow a gateway account settles calls against
  tenzrod tx escrow fund --key buyer.key --amount 1_000_000 --settler 3f…e1`
	withdraw := newEscrowAmountCmd("withdraw", "Start moving micro-units from an escrow back to the balance (paid out after the withdraw delay)",
		"micro-units to withdraw, an integer > 0 (required)",
		func(amt uint64, st terms.AccountID) any { return &ledger.EscrowWithdraw{Amount: amt, Settler: st} })
	withdraw.Example = `  tenzrod tx escrow withdraw --key buyer.key --amount 400000
  # later, once it has unlocked:
  tenzrod tx escrow claim --key buyer.key`

	var (
		co       txOpts
		csettler string
	)
	claim := &cobra.Command{
		Use:     "claim --key FILE [--settler ACCOUNT]",
		Short:   "Pay out an escrow's unlocked withdrawal to the balance",
		Example: `  tenzrod tx escrow claim --key buyer.key`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := settlerOf(csettler)
			if err != nil {
				return err
			}
			return co.submit(cmd, "escrow claim, settler "+fsettlerName(csettler), &ledger.EscrowClaim{Settler: st})
		},
	}
	co.register(claim)
	claim.Flags().StringVar(&csettler, "settler", "", settlerHelp)
	cmd.AddCommand(fund, withdraw, claim)
	return cmd
}

const settlerHelp = "the settler (gateway account ID) of the escrow; default: you"

// newEscrowAmountCmd is `escrow fund` or `escrow withdraw` (verb): --amount
// moved between the balance and the (you, settler) escrow by the
// transaction tx builds.
func newEscrowAmountCmd(verb, short, amountHelp string, tx func(amt uint64, st terms.AccountID) any) *cobra.Command {
	var (
		o       txOpts
		amount  amountFlag
		settler string
	)
	cmd := &cobra.Command{
		Use:   verb + " --key FILE --amount N [--settler ACCOUNT]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			amt, err := amount.required("amount")
			if err != nil {
				return err
			}
			st, err := settlerOf(settler)
			if err != nil {
				return err
			}
			return o.submit(cmd, fmt.Sprintf("escrow %s %d micro-units, settler %s", verb, amt, fsettlerName(settler)), tx(amt, st))
		},
	}
	o.register(cmd)
	cmd.Flags().Var(&amount, "amount", amountHelp)
	cmd.Flags().StringVar(&settler, "settler", "", settlerHelp)
	return cmd
}

// settlerOf parses --settler; "" is the zero account: the payer's own.
func settlerOf(s string) (terms.AccountID, error) {
	if s == "" {
		return terms.AccountID{}, nil
	}
	id, err := terms.ParseAccountID(s)
	if err != nil {
		return id, fmt.Errorf("--settler %q: not an account ID (64 hex digits): %w", s, err)
	}
	return id, nil
}

// fsettlerName is how a --settler value reads in a summary.
func fsettlerName(s string) string {
	if s == "" {
		return "yourself"
	}
	return s
}

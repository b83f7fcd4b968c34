package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestEscrowWithdrawDelay: escrows are per (payer, settler); a withdrawal
// stops the amount being available to records at once, cannot be claimed
// before WithdrawDelayBlocks have passed, then pays out in full; a record
// over the available balance is skipped even though the balance covers it.
func TestEscrowWithdrawDelay(t *testing.T) {
	params := testParams()
	params.WithdrawDelayBlocks = 3
	buyer, gb := signer("buyer", 10_000)
	gw, _ := signer("gateway", 0)
	other, _ := signer("other-gateway", 0)
	op, gop := signer("operator", 5000)
	c := newChain(t, "", genesisTime, params, 1, gb, gop)
	m := newMachine(t)
	c.mustApply(c.sign(op, m.register(t, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1000, Settler: gw.Account()}))
	c.mustApply(c.sign(buyer, &ledger.EscrowFund{Amount: 200, Settler: other.Account()}))
	if e := c.escrow(buyer.Account(), other.Account()); e.Balance != 200 || e.Settler != other.Account() {
		t.Fatalf("second escrow %+v", e)
	}
	c.mustApply(c.sign(buyer, &ledger.EscrowWithdraw{Amount: 700, Settler: gw.Account()}))
	unlock := c.l.Height() + 3
	if e := c.escrow(buyer.Account(), gw.Account()); e.Balance != 1000 || e.Pending != 700 || e.Unlock != unlock || e.Available() != 300 {
		t.Fatalf("escrow after withdraw %+v, want balance 1000, 700 pending until %d", e, unlock)
	}
	env, envHash := m.receipt(t, "answer")
	rec := func(d byte, price uint64) ledger.PaymentRecord {
		return signed(t, gw, ledger.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: ledger.Hash32{d}, Price: price,
			Receipt: env, ReceiptHash: envHash})
	}
	res := c.mustApply(c.sign(buyer, &ledger.Settlement{Records: []ledger.PaymentRecord{rec(1, 301), rec(2, 300)}}))
	wantSkipped(t, res.Txs[0], 1, map[int]ledger.Code{0: ledger.CodeOverdraft})
	wantCodes(t, c, [][]byte{
		c.sign(buyer, &ledger.EscrowWithdraw{Amount: 1, Settler: gw.Account()}),
		c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()}),
		c.sign(buyer, &ledger.EscrowClaim{Settler: op.Account()}),
	}, ledger.CodeOverdraft, ledger.CodeUnbonding, ledger.CodeUnknownEscrow)
	for c.l.Height()+1 < unlock {
		c.block()
	}
	before := c.account(buyer.Account()).Balance
	c.mustApply(c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()}))
	if e := c.escrow(buyer.Account(), gw.Account()); e.Balance != 0 || e.Pending != 0 {
		t.Fatalf("escrow after claim %+v, want empty", e)
	}
	if got := c.account(buyer.Account()).Balance; got != before+700 {
		t.Fatalf("buyer balance %d after claim, want %d", got, before+700)
	}
	wantCodes(t, c, [][]byte{c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()})}, ledger.CodeOverdraft)
}

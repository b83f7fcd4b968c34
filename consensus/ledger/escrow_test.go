package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestEscrowWithdrawDelay: escrows are per (payer, settler); a withdrawal
// stops the amount being available to new withdrawals at once and cannot
// be claimed before WithdrawDelayBlocks have passed, but records (signed,
// perhaps, before it) still draw on the whole balance, so a payer cannot
// withdraw out from under a provider it was served by: what is pending
// shrinks to what the records leave, and that is what the claim pays.
func TestEscrowWithdrawDelay(t *testing.T) {
	params := ledgertest.Params()
	params.WithdrawDelayBlocks = 3
	buyer, gb := ledgertest.Signer(testChain, "buyer", 10_000)
	gw, _ := ledgertest.Signer(testChain, "gateway", 0)
	other, _ := ledgertest.Signer(testChain, "other-gateway", 0)
	op, gop := ledgertest.Signer(testChain, "operator", 5000)
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
	rec := func(d byte, price uint64) receipt.PaymentRecord {
		env, envHash, rd := m.paidReceipt(t, string(rune('0'+d)), buyer.Account(), gw.Account(), 0)
		return ledgertest.Signed(t, gw, receipt.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: rd, Price: price,
			Receipt: env, ReceiptHash: envHash, ExpiryHeight: c.l.Height() + 2})
	}
	// A record valid for longer than the withdrawal delay is refused: it
	// could outlive a withdrawal it was signed before.
	long := rec(4, 1)
	long.ExpiryHeight = c.l.Height() + 5
	long = ledgertest.Signed(t, gw, long)
	res := c.mustApply(c.sign(buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{rec(1, 301), rec(2, 300), rec(3, 400), long}}))
	wantSkipped(t, res.Txs[0], 2, map[int]ledger.Code{2: ledger.CodeOverdraft, 3: ledger.CodeExpiredRecord})
	if e := c.escrow(buyer.Account(), gw.Account()); e.Balance != 399 || e.Pending != 399 || e.Available() != 0 {
		t.Fatalf("escrow after records %+v, want balance 399, all of it pending", e)
	}
	wantCodes(t, c, [][]byte{
		c.sign(buyer, &ledger.EscrowWithdraw{Amount: 1, Settler: gw.Account()}),
		c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()}),
		c.sign(buyer, &ledger.EscrowClaim{Settler: op.Account()}),
	}, ledger.CodeOverdraft, ledger.CodeWithdrawalLocked, ledger.CodeUnknownEscrow)
	for c.l.Height()+1 < unlock {
		c.block()
	}
	before := c.account(buyer.Account()).Balance
	c.mustApply(c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()}))
	if e := c.escrow(buyer.Account(), gw.Account()); e.Balance != 0 || e.Pending != 0 {
		t.Fatalf("escrow after claim %+v, want empty", e)
	}
	if got := c.account(buyer.Account()).Balance; got != before+399 {
		t.Fatalf("buyer balance %d after claim, want %d", got, before+399)
	}
	wantCodes(t, c, [][]byte{c.sign(buyer, &ledger.EscrowClaim{Settler: gw.Account()})}, ledger.CodeOverdraft)
}

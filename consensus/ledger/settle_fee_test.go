package ledger_test

import (
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// feeWorld is a chain with non-zero fees, a registered provider, a
// buyer's escrows with a gateway and with itself, and a third party that
// submits settlements (anyone may).
type feeWorld struct {
	c                  *chain
	params             ledger.Params
	buyer, gw, op, sub *ledger.Signer
	p, stranger        *machine
	calls              int
	tracked            []terms.AccountID
}

const (
	feeTx     = 2
	feeRecord = 7
	escrowAmt = 10_000
)

func newFeeWorld(t *testing.T, submitterBalance uint64) *feeWorld {
	params := ledgertest.Params()
	params.FeePerTx, params.FeePerRecord = feeTx, feeRecord
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	gw, gg := ledgertest.Signer(testChain, "gateway", 1_000)
	op, gop := ledgertest.Signer(testChain, "operator", 5_000)
	sub, gs := ledgertest.Signer(testChain, "submitter", submitterBalance)
	w := &feeWorld{c: newChain(t, "", genesisTime, params, 1, gb, gg, gop, gs), params: params,
		buyer: buyer, gw: gw, op: op, sub: sub, p: newMachine(t), stranger: newMachine(t)}
	w.c.mustApply(
		w.c.SignAt(op, 0, w.p.register(t, op, 1000, 60)),
		w.c.SignAt(buyer, 0, &ledger.EscrowFund{Amount: escrowAmt, Settler: gw.Account()}),
		w.c.SignAt(buyer, 1, &ledger.EscrowFund{Amount: escrowAmt}),
	)
	w.tracked = []terms.AccountID{buyer.Account(), gw.Account(), op.Account(), sub.Account(), ledger.FeePoolAccount}
	return w
}

// honest is a gateway-signed record of a new call served to the buyer
// under the gateway at price, with m's receipt.
func (w *feeWorld) honest(t *testing.T, m *machine, price uint64) receipt.PaymentRecord {
	w.calls++
	env, hash, rd := m.paidReceipt(t, fmt.Sprint("fee call ", w.calls), w.buyer.Account(), w.gw.Account(), price)
	return ledgertest.Signed(t, w.gw, receipt.PaymentRecord{Payer: w.buyer.Account(), Provider: w.p.machineID(), RequestDigest: rd,
		Price: price, Units: 1, ReceiptHash: hash, Receipt: env})
}

// total is Σ of the tracked accounts' balances and the buyer's escrows:
// fees only move money between them.
func (w *feeWorld) total() uint64 {
	var s uint64
	for _, a := range w.tracked {
		s += w.c.account(a).Balance
	}
	return s + w.c.escrow(w.buyer.Account(), w.gw.Account()).Balance + w.c.escrow(w.buyer.Account(), w.buyer.Account()).Balance
}

// TestRefusedRecordFees: a record refused at or after its escrow lookup
// costs the settlement's submitter FeePerRecord, code by code; an expired
// or duplicate record costs it nothing; a settled record's fee comes out
// of its price as before; the report's Fee says what the submitter paid;
// no micro-unit is created or lost.
func TestRefusedRecordFees(t *testing.T) {
	w := newFeeWorld(t, 1_000_000)
	settled := w.honest(t, w.p, 50)
	w.c.mustApply(w.c.sign(w.gw, &ledger.Settlement{Records: []receipt.PaymentRecord{settled}}))
	cases := []struct {
		name string
		rec  func() receipt.PaymentRecord
		code ledger.Code // CodeOK: settles
		paid bool        // the submitter pays FeePerRecord
	}{
		{"settles", func() receipt.PaymentRecord { return w.honest(t, w.p, 40) }, ledger.CodeOK, false},
		{"expired", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.ExpiryHeight = 1
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeExpiredRecord, false},
		{"duplicate", func() receipt.PaymentRecord { return settled }, ledger.CodeDuplicateRecord, false},
		{"unknown escrow", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Payer = w.op.Account()
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeUnknownEscrow, true},
		{"bad record signature", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Sig = append([]byte(nil), r.Sig...)
			r.Sig[0] ^= 1
			return r
		}, ledger.CodeBadRecordSig, true},
		{"unknown provider", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Provider = w.stranger.machineID()
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeUnknownProvider, true},
		{"no receipt", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Receipt, r.ReceiptHash = nil, terms.Hash32{}
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeBadReceipt, true},
		{"another machine's receipt", func() receipt.PaymentRecord {
			r := w.honest(t, w.stranger, 40)
			r.Provider = w.p.machineID()
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeWrongMachine, true},
		{"own settler (the front-run)", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Settler, r.Price = w.buyer.Account(), 1
			return ledgertest.Signed(t, w.buyer, r)
		}, ledger.CodeRecordMismatch, true},
		{"underpriced", func() receipt.PaymentRecord {
			r := w.honest(t, w.p, 40)
			r.Price = 39
			return ledgertest.Signed(t, w.gw, r)
		}, ledger.CodeUnderpriced, true},
		{"over the escrow", func() receipt.PaymentRecord { return w.honest(t, w.p, 2*escrowAmt) }, ledger.CodeOverdraft, true},
	}
	var all []receipt.PaymentRecord
	var allCharged uint64
	for _, tc := range cases {
		rec := tc.rec()
		all = append(all, rec)
		sub0, op0, pool0, sum0 := w.c.account(w.sub.Account()), w.c.account(w.op.Account()).Balance, w.c.account(ledger.FeePoolAccount).Balance, w.total()
		res := w.c.mustApply(w.c.sign(w.sub, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}}))
		want, settledN := map[int]ledger.Code{}, 0
		if tc.code == ledger.CodeOK {
			settledN = 1
		} else {
			want[0] = tc.code
		}
		r := wantSkipped(t, res.Txs[0], settledN, want)
		var recFee, opGain uint64
		if tc.paid {
			recFee, allCharged = feeRecord, allCharged+feeRecord
		}
		poolGain := feeTx + recFee
		if tc.code == ledger.CodeOK {
			opGain, poolGain = rec.Price-feeRecord, poolGain+feeRecord
		}
		sub1 := w.c.account(w.sub.Account())
		switch {
		case r.Fee != recFee:
			t.Errorf("%s: report fee %d, want %d", tc.name, r.Fee, recFee)
		case sub0.Balance-sub1.Balance != feeTx+recFee || sub1.Nonce != sub0.Nonce+1:
			t.Errorf("%s: submitter paid %d, want fee_per_tx %d + %d", tc.name, sub0.Balance-sub1.Balance, feeTx, recFee)
		case w.c.account(w.op.Account()).Balance-op0 != opGain:
			t.Errorf("%s: operator gained %d, want %d", tc.name, w.c.account(w.op.Account()).Balance-op0, opGain)
		case w.c.account(ledger.FeePoolAccount).Balance-pool0 != poolGain:
			t.Errorf("%s: fee pool gained %d, want %d", tc.name, w.c.account(ledger.FeePoolAccount).Balance-pool0, poolGain)
		case w.total() != sum0:
			t.Errorf("%s: accounts and escrows hold %d, were %d", tc.name, w.total(), sum0)
		}
	}
	// The same records again in one settlement: the settled one is now a
	// duplicate; every other charge repeats; forged ones cost the same.
	sub0, sum0 := w.c.account(w.sub.Account()).Balance, w.total()
	r := report(t, w.c.mustApply(w.c.sign(w.sub, &ledger.Settlement{Records: all})).Txs[0])
	if r.Settled != 0 || r.Fee != allCharged || sub0-w.c.account(w.sub.Account()).Balance != feeTx+allCharged || w.total() != sum0 {
		t.Fatalf("batch of %d: report %s, submitter paid %d, want %d (sum %d -> %d)",
			len(all), r.String(), sub0-w.c.account(w.sub.Account()).Balance, feeTx+allCharged, sum0, w.total())
	}
}

// TestSettlementMustAffordRecordFees: a settlement's signer must hold
// FeePerTx + FeePerRecord × its records up front, even for records that
// will turn out duplicates; one that cannot is refused in Check and in a
// block with CodeFeeTooLow, and nothing changes (balance, nonce, escrows,
// fee pool); exactly enough is admitted.
func TestSettlementMustAffordRecordFees(t *testing.T) {
	const n = 3
	w := newFeeWorld(t, feeTx+n*feeRecord-1)
	recs := []receipt.PaymentRecord{w.honest(t, w.p, 40), w.honest(t, w.p, 40), w.honest(t, w.p, 40)}
	tx := w.c.sign(w.sub, &ledger.Settlement{Records: recs})
	sub0, pool0, e0 := w.c.account(w.sub.Account()), w.c.account(ledger.FeePoolAccount), w.c.escrow(w.buyer.Account(), w.gw.Account())
	err := w.c.l.Check(tx)
	if ledger.CodeOf(err) != ledger.CodeFeeTooLow {
		t.Fatalf("Check of an unaffordable settlement: %v, want %v", err, ledger.CodeFeeTooLow)
	}
	t.Logf("refused: %v", err)
	if res := w.c.block(tx); res.Txs[0].Code != ledger.CodeFeeTooLow {
		t.Fatalf("in a block: %v (%s), want %v", res.Txs[0].Code, res.Txs[0].Log, ledger.CodeFeeTooLow)
	}
	if s, p, e := w.c.account(w.sub.Account()), w.c.account(ledger.FeePoolAccount), w.c.escrow(w.buyer.Account(), w.gw.Account()); s != sub0 || p != pool0 || e != e0 {
		t.Fatalf("after the refusal: submitter %+v, pool %+v, escrow %+v; were %+v, %+v, %+v", s, p, e, sub0, pool0, e0)
	}
	// One micro-unit more and it applies; its records settle, so it pays
	// only FeePerTx.
	w.c.mustApply(w.c.sign(w.buyer, &ledger.Transfer{To: w.sub.Account(), Amount: 1}))
	wantSkipped(t, w.c.mustApply(w.c.sign(w.sub, &ledger.Settlement{Records: recs})).Txs[0], n, nil)
	if got := w.c.account(w.sub.Account()).Balance; got != n*feeRecord {
		t.Fatalf("submitter has %d after settling, want %d", got, n*feeRecord)
	}
	// Its replay is all duplicates: free, but still held up front.
	if err := w.c.l.Check(w.c.sign(w.sub, &ledger.Settlement{Records: append(recs, recs[0])})); ledger.CodeOf(err) != ledger.CodeFeeTooLow {
		t.Fatalf("Check of %d duplicates over the balance: %v, want %v", n+1, err, ledger.CodeFeeTooLow)
	}
}

package node

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestCreditWithdrawalAfterServedStillPays: a settler's payer is served a
// call and withdraws its whole escrow at once; the provider still takes
// the record for that call and its collector settles it: the escrow falls
// by exactly the price, the operator rises by the price minus the record
// fee, the pending withdrawal shrinks by the price (it can never pay out
// what the record took), and the escrow has nothing left for new calls.
func TestCreditWithdrawalAfterServedStillPays(t *testing.T) {
	params := testChainParams(3600)
	params.FeePerRecord = 3
	c := newCreditNet(t, 1, params, nil)
	prov := c.provs[0]
	settler := newAccountKey(t)
	sa := keyAccount(settler)
	const funds = 1_000_000
	c.submit(t, &ledger.EscrowFund{Amount: funds, Settler: sa})
	h := newRogueHost(t)
	auth := c.payAuth(settler, h.ID(), c.payerID())
	req := c.request(auth, "withdraw after", 4)
	f := c.served(t, h, prov, req)
	rec := c.record(t, settler, prov, req, f)

	op := accountKey(t, prov.Config())
	bal0, pool0 := accountBalance(t, c.chain, op), accountBalance(t, c.chain, ledger.FeePoolAccount)
	c.submit(t, &ledger.EscrowWithdraw{Amount: funds, Settler: sa})
	e := c.escrow(t, sa)
	if e.Balance != funds || e.Pending != funds || e.Available() != 0 {
		t.Fatalf("after the withdrawal: %+v, want balance and pending %d", e, funds)
	}
	unlock := e.Unlock

	if res := c.deliver(t, h, prov, rec); !res[0].OK() {
		t.Fatalf("record for a call served before the withdrawal refused: %+v", res[0])
	}
	nodetest.Eventually(t, 30*time.Second, "the collector to settle the record", func() bool {
		return c.escrow(t, sa).Balance != funds
	})
	e = c.escrow(t, sa)
	if e.Balance != funds-rec.Price || e.Pending != funds-rec.Price || e.Unlock != unlock {
		t.Fatalf("escrow after settlement %+v, want balance and pending %d − %d, unlock %d", e, funds, rec.Price, unlock)
	}
	if b := accountBalance(t, c.chain, op); b != bal0+rec.Price-params.FeePerRecord {
		t.Fatalf("operator %d, want %d + %d − fee %d", b, bal0, rec.Price, params.FeePerRecord)
	}
	if b := accountBalance(t, c.chain, ledger.FeePoolAccount); b != pool0+params.FeePerRecord {
		t.Fatalf("fee pool %d, want %d + %d", b, pool0, params.FeePerRecord)
	}
	c.synced(t, c.chain.App().Height())
	time.Sleep(1100 * time.Millisecond) // past the provider's one-second escrow cache
	_, err := c.call(t, h, prov, c.request(auth, "more", 4))
	ef := refused(t, "a call on a withdrawn escrow", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)
	if !strings.Contains(ef.Message, "has 0 available") {
		t.Fatalf("refusal %q, want nothing available", ef.Message)
	}
}

// TestCreditRecordsThatMustNotPay: records a provider must not take as
// payment — a forged settler signature, a price altered after signing, a
// receipt of another machine under this provider's name, a record naming
// another machine, a receipt of another request — are refused over
// /tenzro/payment/1.0.0 each with its ledger code, and none clears the
// settler's debt (its next call is still refused unpaid); submitted to
// the chain, the first three are skipped with their codes; a genuine record settled once and replayed in a later
// Settlement is skipped as a duplicate. Escrow and operator balances move
// by the genuine record only; the submitter pays fee_per_record for each
// refused record and none for the duplicate.
func TestCreditRecordsThatMustNotPay(t *testing.T) {
	params := testChainParams(3600)
	params.FeePerRecord = 3
	c := newCreditNet(t, 2, params, nil)
	prov, other := c.provs[0], c.provs[1]
	settler := newAccountKey(t)
	sa := keyAccount(settler)
	c.submit(t, &ledger.EscrowFund{Amount: 1_000_000, Settler: sa})
	h := newRogueHost(t)
	auth := c.payAuth(settler, h.ID(), c.payerID())
	reqA, reqB := c.request(auth, "for the provider", 4), c.request(auth, "for the other", 4)
	fA, fB := c.served(t, h, prov, reqA), c.served(t, h, other, reqB)
	good := c.record(t, settler, prov, reqA, fA)

	forged := good
	c.sign(t, newAccountKey(t), &forged)
	forged.Settler = sa
	altered := good
	altered.Price += 1000
	foreignReceipt := good
	foreignReceipt.Receipt, foreignReceipt.ReceiptHash = fB.Receipt, terms.Hash32(receipt.ReceiptHash(fB.Receipt))
	c.sign(t, settler, &foreignReceipt)
	foreignMachine := c.record(t, settler, other, reqB, fB)
	otherRequest := good // this machine's receipt, another request's digest
	otherRequest.RequestDigest = requestDigest(reqB)
	c.sign(t, settler, &otherRequest)
	bad := []struct {
		name string
		rec  receipt.PaymentRecord
		code ledger.Code
	}{
		{"forged settler signature", forged, ledger.CodeBadRecordSig},
		{"price altered after signing", altered, ledger.CodeBadRecordSig},
		{"another machine's receipt", foreignReceipt, ledger.CodeWrongMachine},
		{"another machine's record", foreignMachine, ledger.CodeWrongMachine},
		{"a receipt for another request", otherRequest, ledger.CodeBadReceipt},
	}

	op := accountKey(t, prov.Config())
	escrow0, bal0 := c.escrow(t, sa).Balance, accountBalance(t, c.chain, op)
	unchanged := func(when string, paid uint64, fee uint64) {
		t.Helper()
		if e := c.escrow(t, sa).Balance; e != escrow0-paid {
			t.Fatalf("%s: escrow %d, want %d − %d", when, e, escrow0, paid)
		}
		if b := accountBalance(t, c.chain, op); b != bal0+paid-fee {
			t.Fatalf("%s: operator %d, want %d + %d − %d", when, b, bal0, paid, fee)
		}
	}
	for _, b := range bad {
		res := c.deliver(t, h, prov, b.rec)
		if ledger.Code(res[0].Code) != b.code {
			t.Errorf("%s: delivery answered code %d (%s) %q, want %d (%s)", b.name, res[0].Code, ledger.Code(res[0].Code), res[0].Reason, b.code, b.code)
		}
	}
	_, err := c.call(t, h, prov, c.request(auth, "still owing", 4))
	refused(t, "a call after only refused records", nil, err, http.StatusPaymentRequired, terms.CodeUnpaid)

	payer := c.payerID()
	payer0 := accountBalance(t, c.chain, payer)
	outs, err := settle.SubmitAll(t.Context(), c.sub, []receipt.PaymentRecord{forged, altered, foreignReceipt})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if o.Status != settle.Skipped || o.Code != bad[i].code || o.Height == 0 {
			t.Errorf("%s on chain: %+v, want skipped in a block with code %s", bad[i].name, o, bad[i].code)
		}
	}
	unchanged("after the forged records", 0, 0)
	// Refused after signature work: the submitter pays fee_per_record each.
	if b, want := accountBalance(t, c.chain, payer), payer0-params.FeePerTx-3*params.FeePerRecord; b != want {
		t.Fatalf("submitter of 3 refused records: %d, want %d − fee_per_tx %d − 3 × %d", b, payer0, params.FeePerTx, params.FeePerRecord)
	}

	if res := c.deliver(t, h, prov, good); !res[0].OK() {
		t.Fatalf("the genuine record refused: %+v", res[0])
	}
	nodetest.Eventually(t, 30*time.Second, "the genuine record to settle", func() bool {
		return c.escrow(t, sa).Balance != escrow0
	})
	unchanged("after the genuine record", good.Price, params.FeePerRecord)
	outs, err = settle.SubmitAll(t.Context(), c.sub, []receipt.PaymentRecord{good})
	if err != nil {
		t.Fatal(err)
	}
	if o := outs[0]; o.Status != settle.Duplicate || o.Code != ledger.CodeDuplicateRecord || o.Height == 0 {
		t.Fatalf("replayed record: %+v, want a duplicate skipped in a block", o)
	}
	// A duplicate costs its submitter no record fee.
	if b, want := accountBalance(t, c.chain, payer), payer0-2*params.FeePerTx-3*params.FeePerRecord; b != want {
		t.Fatalf("submitter after the replay: %d, want %d", b, want)
	}
	unchanged("after the replay", good.Price, params.FeePerRecord)
}

package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestSettlementChecksReceipts settles records carrying receipt envelopes:
// one signed by the provider's registered machine applies and is stored as
// checked; one from another registered machine, one whose hash does not
// match, one with a broken signature, one of another domain and one
// whose session expired before the block are each skipped with their code
// while the good record of the batch settles; a record without a receipt
// is skipped too (receipts are required).
func TestSettlementChecksReceipts(t *testing.T) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gop)
	prov, other := newMachine(t), newMachine(t)
	expired := newMachineOn(t, hwkey.BackendSoftware, genesisTime.Add(-2*time.Hour), genesisTime.Add(-time.Hour))
	var regs [][]byte
	for i, m := range []*machine{prov, other, expired} {
		regs = append(regs, c.SignAt(op, uint64(i), m.register(t, op, 1000, 60)))
	}
	c.mustApply(append(regs, c.sign(buyer, &ledger.EscrowFund{Amount: 50_000}))...)

	n := byte(0)
	record := func(provider identity.MachineID, env []byte, hash terms.Hash32) receipt.PaymentRecord {
		n++
		rd := terms.Hash32{n} // a receipt that does not parse answers no request
		if _, r, err := receipt.Parse(env); err == nil {
			rd = receipt.RequestDigest(r.Nonce, [32]byte(r.InputCommitment), r.ModelID)
		}
		return ledgertest.Signed(t, buyer, receipt.PaymentRecord{Payer: buyer.Account(), Provider: provider, RequestDigest: rd,
			QuoteDigest: terms.Hash32{0xaa}, Price: 100, ReceiptHash: hash, Receipt: env})
	}
	sign := func(m *machine, payload string) ([]byte, terms.Hash32) {
		env, hash, _ := m.paidReceipt(t, payload, buyer.Account(), buyer.Account(), 0)
		return env, hash
	}
	good, goodHash := sign(prov, "answer 1")
	fromOther, otherHash := sign(other, "answer 2")
	fromExpired, expiredHash := sign(expired, "answer 3")
	broken, _ := sign(prov, "answer 4")
	broken[len(broken)-3] ^= 1 // inside the DER signature, the last field
	brokenHash := terms.Hash32(sha256.Sum256(broken))
	hb, err := prov.Session.Seal("tenzro/v1/heartbeat", "tenzro.heartbeat", []byte("hb"))
	if err != nil {
		t.Fatal(err)
	}
	heartbeat, _ := hb.Marshal()

	escrowBefore := c.escrow(buyer.Account(), buyer.Account())
	for _, tc := range []struct {
		name string
		rec  receipt.PaymentRecord
		code ledger.Code
	}{
		{"receipt from another machine", record(prov.machineID(), fromOther, otherHash), ledger.CodeWrongMachine},
		{"receipt hash mismatch", record(prov.machineID(), good, terms.Hash32{9}), ledger.CodeBadReceipt},
		{"bad session signature", record(prov.machineID(), broken, brokenHash), ledger.CodeBadReceipt},
		{"heartbeat, not a receipt", record(prov.machineID(), heartbeat, terms.Hash32(sha256.Sum256(heartbeat))), ledger.CodeBadReceipt},
		{"expired session", record(expired.machineID(), fromExpired, expiredHash), ledger.CodeBadReceipt},
	} {
		// The bad record follows a good one: only the bad one is skipped.
		okEnv, okHash := sign(prov, "good "+tc.name)
		ok := record(prov.machineID(), okEnv, okHash)
		res := c.block(c.sign(buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{ok, tc.rec}}))
		r := report(t, res.Txs[0])
		if r.Settled != 1 || len(r.Skipped) != 1 || r.Skipped[0].Index != 1 || r.Skipped[0].Code != tc.code {
			t.Errorf("%s: %s %+v, want record 1 skipped with %v", tc.name, r.String(), r.Skipped, tc.code)
		}
	}
	if e := c.escrow(buyer.Account(), buyer.Account()); e.Balance != escrowBefore.Balance-500 {
		t.Fatalf("skipped records moved money: escrow %+v -> %+v, want only 5 good records of 100", escrowBefore, e)
	}
	escrowBefore = c.escrow(buyer.Account(), buyer.Account())

	rec := record(prov.machineID(), good, goodHash)
	plain := record(prov.machineID(), nil, terms.Hash32{7})
	res := c.mustApply(c.sign(buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{rec, plain}}))
	wantSkipped(t, res.Txs[0], 1, map[int]ledger.Code{1: ledger.CodeBadReceipt})
	var sr ledger.SettledRecord
	if !c.get(ledger.KeyRecord(buyer.Account(), rec.RequestDigest), &sr) {
		t.Fatal("settled record not found")
	}
	if !sr.ReceiptChecked || sr.Record.Receipt != nil || sr.Record.ReceiptHash != goodHash {
		t.Fatalf("stored record %+v: want receipt checked, envelope dropped, hash kept", sr)
	}
	var sp ledger.SettledRecord
	if c.get(ledger.KeyRecord(buyer.Account(), plain.RequestDigest), &sp) {
		t.Fatalf("record without receipt stored as %+v", sp)
	}
	if e := c.escrow(buyer.Account(), buyer.Account()); e.Balance != escrowBefore.Balance-100 {
		t.Fatalf("escrow %d after one record of 100, want %d", e.Balance, escrowBefore.Balance-100)
	}
	if !bytes.Equal(good, rec.Receipt) {
		t.Fatal("settlement modified the caller's record")
	}
}

package consensus_test

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func newMachine(t *testing.T, notBefore, notAfter time.Time) *testnet.Machine {
	t.Helper()
	m, err := testnet.NewMachine(t.TempDir(), notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// TestSettlementChecksReceipts settles records carrying receipt envelopes:
// one signed by the provider's registered machine applies and is stored as
// checked; one from another registered machine, one whose hash does not
// match, one with a broken signature, one of another domain and one
// whose session expired before the block are each refused with their code,
// and the refused batches change nothing.
func TestSettlementChecksReceipts(t *testing.T) {
	buyer, gb := signer("buyer", 1_000_000)
	op, gop := signer("operator", 10_000)
	c := newChain(t, "", genesisTime, testParams(), 1, gb, gop)
	valid := func() *testnet.Machine { return newMachine(t, genesisTime.Add(-time.Hour), genesisTime.Add(time.Hour)) }
	prov, other := valid(), valid()
	expired := newMachine(t, genesisTime.Add(-2*time.Hour), genesisTime.Add(-time.Hour))
	var regs [][]byte
	for i, m := range []*testnet.Machine{prov, other, expired} {
		reg, err := m.Register(1000, 60)
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, c.signAt(op, uint64(i), reg))
	}
	c.mustApply(append(regs, c.sign(buyer, &consensus.EscrowFund{Amount: 50_000}))...)

	n := byte(0)
	record := func(provider identity.MachineID, env []byte, hash consensus.Hash32) consensus.PaymentRecord {
		n++
		return consensus.PaymentRecord{Payer: buyer.Account(), Provider: provider, RequestDigest: consensus.Hash32{n},
			QuoteDigest: consensus.Hash32{0xaa}, Price: 100, ReceiptHash: hash, Receipt: env}
	}
	receipt := func(m *testnet.Machine, payload string) ([]byte, consensus.Hash32) {
		env, h, err := m.Receipt([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		return env, h
	}
	good, goodHash := receipt(prov, "answer 1")
	fromOther, otherHash := receipt(other, "answer 2")
	fromExpired, expiredHash := receipt(expired, "answer 3")
	broken, _ := receipt(prov, "answer 4")
	broken[len(broken)-3] ^= 1 // inside the DER signature, the last field
	brokenHash := consensus.Hash32(sha256.Sum256(broken))
	hb, err := prov.Session.Seal("tenzro/v1/heartbeat", "tenzro.heartbeat", []byte("hb"))
	if err != nil {
		t.Fatal(err)
	}
	heartbeat, _ := hb.Marshal()

	escrowBefore := escrowOf(c, buyer.Account())
	for _, tc := range []struct {
		name string
		rec  consensus.PaymentRecord
		code consensus.Code
	}{
		{"receipt from another machine", record(prov.MachineID(), fromOther, otherHash), consensus.CodeWrongMachine},
		{"receipt hash mismatch", record(prov.MachineID(), good, consensus.Hash32{9}), consensus.CodeBadReceipt},
		{"bad session signature", record(prov.MachineID(), broken, brokenHash), consensus.CodeBadReceipt},
		{"heartbeat, not a receipt", record(prov.MachineID(), heartbeat, consensus.Hash32(sha256.Sum256(heartbeat))), consensus.CodeBadReceipt},
		{"expired session", record(expired.MachineID(), fromExpired, expiredHash), consensus.CodeBadReceipt},
	} {
		// The bad record follows a good one: the whole batch must go.
		ok := record(prov.MachineID(), good, goodHash)
		res := c.block(c.sign(buyer, &consensus.Settlement{Records: []consensus.PaymentRecord{ok, tc.rec}}))
		if got := consensus.Code(res.TxResults[0].Code); got != tc.code {
			t.Errorf("%s: %v (%s), want %v", tc.name, got, res.TxResults[0].Log, tc.code)
		}
	}
	if e := escrowOf(c, buyer.Account()); e != escrowBefore {
		t.Fatalf("refused settlements changed the escrow: %+v -> %+v", escrowBefore, e)
	}

	rec := record(prov.MachineID(), good, goodHash)
	plain := record(prov.MachineID(), nil, consensus.Hash32{7})
	c.mustApply(c.sign(buyer, &consensus.Settlement{Records: []consensus.PaymentRecord{rec, plain}}))
	var sr consensus.SettledRecord
	if !c.query("record/"+buyer.Account().String()+"/"+rec.RequestDigest.String(), &sr) {
		t.Fatal("settled record not found")
	}
	if !sr.ReceiptChecked || sr.Record.Receipt != nil || sr.Record.ReceiptHash != goodHash {
		t.Fatalf("stored record %+v: want receipt checked, envelope dropped, hash kept", sr)
	}
	var sp consensus.SettledRecord
	if !c.query("record/"+buyer.Account().String()+"/"+plain.RequestDigest.String(), &sp) || sp.ReceiptChecked {
		t.Fatalf("record without receipt stored as %+v, want not checked", sp)
	}
	if e := escrowOf(c, buyer.Account()); e.Balance != escrowBefore.Balance-200 {
		t.Fatalf("escrow %d after two records of 100, want %d", e.Balance, escrowBefore.Balance-200)
	}
	if !bytes.Equal(good, rec.Receipt) {
		t.Fatal("settlement modified the caller's record")
	}
}

func escrowOf(c *chain, id consensus.AccountID) consensus.Escrow {
	c.t.Helper()
	var e consensus.Escrow
	c.query("escrow/"+id.String(), &e)
	return e
}

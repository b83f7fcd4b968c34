package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// callReceipt is the receipt m signs for the call seeded by seed, served
// to payer under settler at price; nil accounts make an unpaid receipt.
func callReceipt(m *machine, seed string, payer, settler *terms.AccountID, price uint64) *receipt.Receipt {
	h := sha256.Sum256([]byte("ledger test call " + seed))
	mid := m.machineID()
	r := &receipt.Receipt{ModelID: ledgertest.Model[:], Engine: "moteur-é", MachineID: mid[:], ProviderPeer: []byte(m.PeerID),
		Nonce: h[:16], InputCommitment: h[:], OutputHash: h[:], Units: terms.Units{InputTokens: 2, OutputTokens: 3},
		FinishReason: "stop", TimeMs: genesisTime.UnixMilli()}
	if payer != nil {
		r.Payer, r.Settler, r.Price = payer[:], settler[:], price
	}
	return r
}

// sealed signs r with m's session and returns the envelope, its hash and
// the request digest of the call it answers.
func sealed(t testing.TB, m *machine, r *receipt.Receipt) ([]byte, terms.Hash32, terms.Hash32) {
	t.Helper()
	env, err := receipt.Sign(m.Session, r)
	if err != nil {
		t.Fatal(err)
	}
	return env, sha256.Sum256(env), requestOf(t, env)
}

// TestRecordBoundToReceipt: the chain settles a record only when its
// request, payer and settler are the ones the provider's receipt names
// and its price is at least the receipt's, whoever signs or submits it.
// The buyer's front-running attack of issue 35 (its own escrow as settler,
// the gateway's record re-signed at price 1, submitted first) and every
// variation of it are refused with CodeRecordMismatch or CodeUnderpriced;
// the gateway's honest record then settles at its price; a replay, or
// another receipt of the same call, is a duplicate by (provider, request).
func TestRecordBoundToReceipt(t *testing.T) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	other, gother := ledgertest.Signer(testChain, "other buyer", 1_000_000)
	gw, gg := ledgertest.Signer(testChain, "gateway", 0)
	op, gop := ledgertest.Signer(testChain, "operator", 5000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gother, gg, gop)
	p := newMachine(t)
	c.mustApply(
		c.SignAt(op, 0, p.register(t, op, 1000, 60)),
		c.SignAt(buyer, 0, &ledger.EscrowFund{Amount: 10_000, Settler: gw.Account()}),
		c.SignAt(buyer, 1, &ledger.EscrowFund{Amount: 10_000}), // the attacker's own escrow: it settles it
		c.SignAt(other, 0, &ledger.EscrowFund{Amount: 10_000, Settler: gw.Account()}),
	)
	b, g, o := buyer.Account(), gw.Account(), other.Account()
	const owed = 100 // the provider's price for the call; the gateway adds 1 of surcharge
	env, envHash, rd := sealed(t, p, callReceipt(p, "call", &b, &g, owed))
	honest := ledgertest.Signed(t, gw, receipt.PaymentRecord{Payer: b, Provider: p.machineID(), RequestDigest: rd, QuoteDigest: terms.Hash32{1},
		Price: owed + 1, Units: 5, ReceiptHash: envHash, Receipt: env})
	variant := func(by *ledger.Signer, f func(*receipt.PaymentRecord)) receipt.PaymentRecord {
		r := honest
		f(&r)
		return ledgertest.Signed(t, by, r)
	}
	unpaidEnv, unpaidHash, _ := sealed(t, p, callReceipt(p, "call", nil, nil, 0))
	// A receipt whose finish reason is not UTF-8 cannot be encoded by
	// Marshal: patch one byte of a valid encoding and seal that.
	badUTF8 := callReceipt(p, "call", &b, &b, 0)
	badUTF8.FinishReason = "stopX"
	payload, err := badUTF8.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	payload = bytes.Replace(payload, []byte("stopX"), []byte("stop\xff"), 1)
	raw, err := p.Session.Seal(ledger.ReceiptDomain, receipt.PayloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	rawEnv, _ := raw.Marshal()

	forged := []struct {
		name string
		rec  receipt.PaymentRecord
		code ledger.Code
	}{
		{"the attack: own settler, price 1", variant(buyer, func(r *receipt.PaymentRecord) { r.Price = 1 }), ledger.CodeRecordMismatch},
		{"settler swapped", variant(buyer, func(*receipt.PaymentRecord) {}), ledger.CodeRecordMismatch},
		{"settler swapped, price raised", variant(buyer, func(r *receipt.PaymentRecord) { r.Price = 5000 }), ledger.CodeRecordMismatch},
		{"settler swapped, units changed", variant(buyer, func(r *receipt.PaymentRecord) { r.Units, r.Price = 1, 20 }), ledger.CodeRecordMismatch},
		{"payer swapped", variant(gw, func(r *receipt.PaymentRecord) { r.Payer = o }), ledger.CodeRecordMismatch},
		{"price lowered by the settler", variant(gw, func(r *receipt.PaymentRecord) { r.Price = owed - 1 }), ledger.CodeUnderpriced},
		{"units and price lowered by the settler", variant(gw, func(r *receipt.PaymentRecord) { r.Units, r.Price = 1, 20 }), ledger.CodeUnderpriced},
		{"request never served", variant(gw, func(r *receipt.PaymentRecord) { r.RequestDigest = terms.Hash32{0x42} }), ledger.CodeRecordMismatch},
		{"request never served, no receipt", variant(gw, func(r *receipt.PaymentRecord) {
			r.RequestDigest, r.Receipt, r.ReceiptHash = terms.Hash32{0x43}, nil, terms.Hash32{}
		}), ledger.CodeBadReceipt},
		{"receipt of an unpaid call", variant(gw, func(r *receipt.PaymentRecord) { r.Receipt, r.ReceiptHash = unpaidEnv, unpaidHash }), ledger.CodeRecordMismatch},
		{"receipt with invalid UTF-8", variant(buyer, func(r *receipt.PaymentRecord) { r.Receipt, r.ReceiptHash = rawEnv, sha256.Sum256(rawEnv) }), ledger.CodeBadReceipt},
	}
	recs := make([]receipt.PaymentRecord, len(forged))
	want := map[int]ledger.Code{}
	for i, f := range forged {
		recs[i], want[i] = f.rec, f.code
	}
	// The buyer submits every forgery first, in one block.
	r := wantSkipped(t, c.mustApply(c.sign(buyer, &ledger.Settlement{Records: recs})).Txs[0], 0, want)
	for _, s := range r.Skipped {
		t.Logf("%s: %v: %s", forged[s.Index].name, s.Code, s.Reason)
	}
	before := c.account(op.Account()).Balance
	wantSkipped(t, c.mustApply(c.sign(op, &ledger.Settlement{Records: []receipt.PaymentRecord{honest}})).Txs[0], 1, nil)
	fee := min(ledgertest.Params().FeePerRecord, honest.Price)
	if got := c.account(op.Account()).Balance; got != before+honest.Price-fee {
		t.Fatalf("operator %d after the honest record, want %d", got, before+honest.Price-fee)
	}
	if e := c.escrow(b, g); e.Balance != 10_000-honest.Price {
		t.Fatalf("gateway's escrow %d, want %d", e.Balance, 10_000-honest.Price)
	}
	if e := c.escrow(b, b); e.Balance != 10_000 {
		t.Fatalf("the attacker's own escrow moved: %d", e.Balance)
	}
	d, err := receipt.RecordDigest(testChain, &honest)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.raw(ledger.KeyServed(p.machineID(), rd)); string(got) != string(d[:]) {
		t.Fatalf("served mark %x, want the honest record's digest %x", got, d)
	}

	// Replays, and a second receipt of the same call naming another
	// payer, are duplicates by (provider, request), whoever submits.
	env2, env2Hash, _ := sealed(t, p, callReceipt(p, "call", &o, &g, owed))
	second := ledgertest.Signed(t, gw, receipt.PaymentRecord{Payer: o, Provider: p.machineID(), RequestDigest: rd, Price: owed, ReceiptHash: env2Hash, Receipt: env2})
	wantSkipped(t, c.mustApply(c.sign(buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{honest, second, recs[0]}})).Txs[0], 0,
		map[int]ledger.Code{0: ledger.CodeDuplicateRecord, 1: ledger.CodeDuplicateRecord, 2: ledger.CodeDuplicateRecord})
	if e := c.escrow(o, g); e.Balance != 10_000 {
		t.Fatalf("other payer's escrow moved: %d", e.Balance)
	}
}

// TestExpertRecordNotDedupedByHolder: an expert holder's receipt names no
// payer or settler, so the chain does not mark its call served by
// (holder, request): a record anyone signs for it from their own escrow
// cannot pre-empt the serving provider's record for the same receipt.
func TestExpertRecordNotDedupedByHolder(t *testing.T) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	serving, gs := ledgertest.Signer(testChain, "serving provider", 1_000_000)
	op, gop := ledgertest.Signer(testChain, "holder operator", 5000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gs, gop)
	holder := newMachine(t)
	c.mustApply(
		c.SignAt(op, 0, holder.register(t, op, 1000, 60)),
		c.SignAt(buyer, 0, &ledger.EscrowFund{Amount: 10_000}),
		c.SignAt(serving, 0, &ledger.EscrowFund{Amount: 10_000}),
	)
	mid := holder.machineID()
	env := sealExpert(t, holder.Session, &ledger.ExpertReceipt{Model: ledgertest.Model, Layer: 1, Machine: mid[:], Peer: []byte(holder.PeerID),
		TimeMs: genesisTime.UnixMilli()})
	rd := terms.Hash32{0xe5}
	rec := func(by *ledger.Signer, price uint64) receipt.PaymentRecord {
		return ledgertest.Signed(t, by, receipt.PaymentRecord{Payer: by.Account(), Provider: mid, RequestDigest: rd, Price: price,
			Receipt: env, ReceiptHash: sha256.Sum256(env)})
	}
	wantSkipped(t, c.mustApply(c.sign(buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{rec(buyer, 1)}})).Txs[0], 1, nil)
	wantSkipped(t, c.mustApply(c.sign(serving, &ledger.Settlement{Records: []receipt.PaymentRecord{rec(serving, 40)}})).Txs[0], 1, nil)
	if got := c.raw(ledger.KeyServed(mid, rd)); got != nil {
		t.Fatalf("an expert record marked its call served: %x", got)
	}
}

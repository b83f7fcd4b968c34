package ledger_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestBatchDisputeGuilty: a convicted expert batch slashes its holder as
// a record's conviction does, reverses the record's payment once, and a
// second convicted batch of the same record (the same episode) slashes
// nothing more and reverses nothing more; the batch cannot be disputed twice, whatever record names
// it; money is conserved but for the burned amounts. Every block leaves
// the mirror node at the same state root.
func TestBatchDisputeGuilty(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10, 10}, false)
	c := n.c
	n.declareAll()
	call := n.expertCall(t, "guilty", 10_000)
	before := n.money()
	op0, dis0 := c.account(n.operator.Account()).Balance, c.account(n.disputer.Account()).Balance
	esc0 := c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
	open := n.batchOpen(call, 1, 1)
	id := ledger.DisputeID(open.Subject)
	res := n.block(c.sign(n.disputer, open))
	if string(res.Txs[0].Data) != string(id[:]) {
		t.Fatalf("open's data %x, want %s", res.Txs[0].Data, id)
	}
	if d := n.dispute(id); d.Model != n.model || d.Provider != n.m.machineID() || d.Operator != n.operator.Account() || d.Credited != 10_000 {
		t.Fatalf("dispute after the open: %+v", d)
	}
	var stored ledger.DisputeEvidence
	if !c.get(ledger.KeyDisputeEvidence(id), &stored) || string(stored.Output) != string(open.Evidence.Output) || stored.Entry != 1 {
		t.Fatal("batch evidence not stored for the committee")
	}
	n.block()
	n.vote(id, everyone(n.dispute(id), ledger.VerdictGuilty))
	d := n.dispute(id)
	slash := uint64(10_000_000 / 10)
	reward := slash * 4 / 10
	if d.Status != ledger.DisputeGuilty || d.Slashed != slash || d.Reward != reward || d.Reversed != 10_000 {
		t.Fatalf("after guilty reveals: %+v", d)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0+reward {
		t.Fatalf("disputer has %d, want %d", got, dis0+reward)
	}
	if c.account(n.operator.Account()).Balance != op0-10_000 || c.escrow(n.buyer.Account(), n.buyer.Account()).Balance != esc0+10_000 {
		t.Fatal("the holder's payment was not reversed to the payer's escrow")
	}
	if got := n.money(id); got != before {
		t.Fatalf("money %d after the verdict, before %d", got, before)
	}
	if st := c.standing(n.m); st.StandingBP != 0 || st.SlashedUntil == 0 {
		t.Fatalf("standing after conviction %+v", st)
	}
	// Another batch of the same record: judged guilty, but the episode
	// was slashed already and the record reversed already.
	second := n.batchOpen(call, 2, 0)
	id2 := ledger.DisputeID(second.Subject)
	n.block(c.sign(n.disputer, second))
	n.block()
	n.vote(id2, everyone(n.dispute(id2), ledger.VerdictGuilty))
	d2 := n.dispute(id2)
	if d2.Status != ledger.DisputeGuilty || d2.Reversed != 0 || d2.Slashed != 0 || d2.Reward != 0 {
		t.Fatalf("second conviction of one record: %+v", d2)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0+reward {
		t.Fatalf("disputer has %d after the episode's second verdict, want its bond back: %d", got, dis0+reward)
	}
	if p := n.provider(); p.Bond != 10_000_000-slash || !p.Barred || p.RebondDue != slash {
		t.Fatalf("holder after two convictions of one episode: %+v", p)
	}
	var rec ledger.SettledRecord
	if !c.get(ledger.KeyRecord(n.buyer.Account(), call.digest), &rec) || rec.Reversed != 10_000 {
		t.Fatalf("record after two convictions: reversed %d, want 10000", rec.Reversed)
	}
	if got := n.money(id, id2); got != before {
		t.Fatalf("money %d after two verdicts, before %d", got, before)
	}
	// The same batch named under another record is the same dispute.
	again := n.batchOpen(call, 1, 1)
	again.Subject.RequestDigest = terms.Hash32{9}
	if ledger.DisputeID(again.Subject) != id {
		t.Fatal("a batch's dispute ID depends on the record naming it")
	}
	if code := n.try(c.sign(n.disputer, n.batchOpen(call, 1, 1))); code != ledger.CodeDuplicate {
		t.Fatalf("a convicted batch disputed again: %v", code)
	}
}

// TestBatchDisputeInnocent: an acquitted batch pays the disputer's bond
// to the holder's operator and leaves its bond and standing whole.
func TestBatchDisputeInnocent(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	n.declareAll()
	call := n.expertCall(t, "innocent", 10_000)
	op0, dis0 := c.account(n.operator.Account()).Balance, c.account(n.disputer.Account()).Balance
	open := n.batchOpen(call, 0, 0)
	id := ledger.DisputeID(open.Subject)
	n.block(c.sign(n.disputer, open))
	n.block()
	n.vote(id, everyone(n.dispute(id), ledger.VerdictInnocent))
	if d := n.dispute(id); d.Status != ledger.DisputeInnocent || d.Reversed != 0 {
		t.Fatalf("after innocent reveals: %+v", d)
	}
	if c.account(n.operator.Account()).Balance != op0+disputeBond || c.account(n.disputer.Account()).Balance != dis0-disputeBond {
		t.Fatal("the disputer's bond did not go to the holder's operator")
	}
	if n.provider().Bond != 10_000_000 || c.standing(n.m).SlashedUntil != 0 {
		t.Fatal("an acquitted holder lost bond or standing")
	}
}

// TestBatchDisputeRefusals: every way a batch dispute's subject and
// evidence can fail to match what the holder signed and was paid for is
// refused with its own code and reason, and changes nothing.
func TestBatchDisputeRefusals(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	n.declareAll()
	call := n.expertCall(t, "refused", 100)
	other := n.expertCall(t, "other", 100)
	plain := n.answer(t, 0)
	plainDigest := n.settle(t, 100, plain)[0]
	// Receipts the payer listed and paid the machine for, which the
	// machine never signed as they are: one signed by another machine
	// naming this one, one whose payload was changed after signing, and
	// one dated after the block.
	stranger := newMachine(t)
	mid := n.m.machineID()
	entry := []ledger.ExpertEntry{{Expert: 2, Positions: []uint32{0}, InputHash: sha256.Sum256(rowBytes("f", 1)), OutputHash: sha256.Sum256(rowBytes("g", 1))}}
	honest := &ledger.ExpertReceipt{Model: n.model, Layer: batchLayer, Machine: mid[:], Peer: []byte(n.m.PeerID), TimeMs: genesisTime.UnixMilli(), Entries: entry}
	forged := sealExpert(t, stranger.Session, &ledger.ExpertReceipt{Model: n.model, Layer: batchLayer, Machine: mid[:], Peer: []byte(stranger.PeerID),
		TimeMs: genesisTime.UnixMilli(), Entries: entry})
	env, err := identity.UnmarshalEnvelope(sealExpert(t, n.m.Session, honest), ledger.MaxExpertReceiptBytes)
	if err != nil {
		t.Fatal(err)
	}
	altered := *honest
	altered.TimeMs++
	if env.Payload, err = cborx.Marshal(&altered); err != nil {
		t.Fatal(err)
	}
	tampered, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	late := *honest
	late.TimeMs = genesisTime.Add(10 * time.Minute).UnixMilli()
	future := sealExpert(t, n.m.Session, &late)
	bad := map[string]*expertCall{}
	for name, r := range map[string][]byte{"forged": forged, "tampered": tampered, "future": future} {
		bc := &expertCall{receipts: [][]byte{r}, hashes: []terms.Hash32{sha256.Sum256(r)},
			rows: [][2][]byte{{rowBytes("f", 1)}}, out: [][2][]byte{{rowBytes("g", 1)}}, digest: sha256.Sum256([]byte(name))}
		rec := ledgertest.Signed(t, n.buyer, receipt.PaymentRecord{Payer: n.buyer.Account(), Provider: mid, RequestDigest: bc.digest,
			QuoteDigest: ledger.ReceiptsHash(bc.hashes), Price: 100, Units: 1, Receipt: call.receipts[0], ReceiptHash: call.hashes[0],
			ExpiryHeight: c.l.Height() + 50})
		wantSkipped(t, n.block(c.sign(n.operator, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}})).Txs[0], 1, nil)
		bad[name] = bc
	}

	type tc struct {
		edit func(*ledger.DisputeOpen)
		code ledger.Code
		why  string
	}
	cases := map[string]tc{
		"not in the record's list": {func(p *ledger.DisputeOpen) {
			p.Evidence.Receipt, p.Subject.Batch.ReceiptHash = other.receipts[0], other.hashes[0]
		}, ledger.CodeBadEvidence, "not among"},
		"list not the quote digest": {func(p *ledger.DisputeOpen) { p.Evidence.ReceiptHashes = p.Evidence.ReceiptHashes[:2] }, ledger.CodeBadEvidence, "quote digest"},
		"receipt not the named one": {func(p *ledger.DisputeOpen) { p.Evidence.Receipt = call.receipts[0] }, ledger.CodeBadEvidence, "the batch names"},
		"input rows":                {func(p *ledger.DisputeOpen) { p.Evidence.Rows = call.rows[1][0] }, ledger.CodeBadEvidence, "input rows"},
		"output rows":               {func(p *ledger.DisputeOpen) { p.Evidence.Output = call.out[1][0] }, ledger.CodeBadEvidence, "output rows"},
		"partial rows": {func(p *ledger.DisputeOpen) {
			p.Evidence.Rows, p.Evidence.Output = p.Evidence.Rows[:4], p.Evidence.Output[:4]
		}, ledger.CodeBadEvidence, "whole float32 rows"},
		"wrong expert":       {func(p *ledger.DisputeOpen) { p.Subject.Batch.Expert = 7 }, ledger.CodeBadEvidence, "expert 5"},
		"wrong layer":        {func(p *ledger.DisputeOpen) { p.Subject.Batch.Layer = 3 }, ledger.CodeBadEvidence, "layer"},
		"entry out of range": {func(p *ledger.DisputeOpen) { p.Evidence.Entry = 2 }, ledger.CodeBadEvidence, "entry 2"},
		"wrong holder":       {func(p *ledger.DisputeOpen) { p.Subject.Batch.Holder = stranger.machineID() }, ledger.CodeWrongMachine, "record's provider"},
		"not an expert record": {func(p *ledger.DisputeOpen) { p.Subject.RequestDigest = plainDigest },
			ledger.CodeBadEvidence, "quote digest"},
		"no record":      {func(p *ledger.DisputeOpen) { p.Subject.RequestDigest = terms.Hash32{7} }, ledger.CodeBadEvidence, "no settled record"},
		"oversized rows": {func(p *ledger.DisputeOpen) { p.Evidence.Rows = make([]byte, ledger.MaxDisputeRowBytes+4) }, ledger.CodeTooLarge, "limit"},
		"too many hashes": {func(p *ledger.DisputeOpen) {
			p.Evidence.ReceiptHashes = make([]terms.Hash32, ledger.MaxDisputeReceiptHashes+1)
		}, ledger.CodeTooLarge, "receipt hashes"},
		"record evidence": {func(p *ledger.DisputeOpen) { p.Evidence.Tokens = []uint32{1} }, ledger.CodeMalformed, "tokens"},
		"low bond":        {func(p *ledger.DisputeOpen) { p.Bond = 499 }, ledger.CodeBondTooLow, "minimum"},
	}
	for name, k := range cases {
		p := n.batchOpen(call, 1, 1)
		k.edit(p)
		res := n.blockTry(c.sign(n.disputer, p))
		if res.Code != k.code || !strings.Contains(res.Log, k.why) {
			t.Errorf("%s: %v (%s), want %v with %q", name, res.Code, res.Log, k.code, k.why)
		}
	}
	for name, want := range map[string]struct {
		code ledger.Code
		why  string
	}{
		"forged":   {ledger.CodeWrongMachine, "certificate"},
		"tampered": {ledger.CodeBadReceipt, "signature"},
		"future":   {ledger.CodeBadReceipt, "after the block"},
	} {
		p := n.batchOpen(bad[name], 0, 0)
		p.Subject.Batch.Expert = 2
		if res := n.blockTry(c.sign(n.disputer, p)); res.Code != want.code || !strings.Contains(res.Log, want.why) {
			t.Errorf("%s receipt: %v (%s), want %v with %q", name, res.Code, res.Log, want.code, want.why)
		}
	}
	if c.raw(ledger.KeyActiveDisputes()) != nil {
		t.Fatal("a refused dispute is active")
	}
	// Past the record's window.
	for c.l.Height() <= int64(disputeParams().DisputeWindowBlocks)+5 {
		n.block()
	}
	if res := n.blockTry(c.sign(n.disputer, n.batchOpen(call, 1, 1))); res.Code != ledger.CodeDisputeWindow {
		t.Errorf("batch dispute after the window: %v (%s)", res.Code, res.Log)
	}
}

// blockTry finalizes one tx on a copy of the next block (dropped) and
// returns its outcome.
func (n *disputeNet) blockTry(tx []byte) ledger.TxOutcome {
	n.c.T.Helper()
	h := n.c.l.Height() + 1
	res, err := n.c.l.FinalizeHashed(h, n.c.Now.Add(time.Second), n.hash(h), [][]byte{tx})
	if err != nil {
		n.c.T.Fatal(err)
	}
	return res.Txs[0]
}

// TestRecordEvidenceEncodingUnchanged: the expert-batch keys are omitted
// from a record's evidence, which encodes byte for byte as before they
// existed.
func TestRecordEvidenceEncodingUnchanged(t *testing.T) {
	type before struct {
		Receipt []byte   `cbor:"1,keyasint"`
		Proofs  []byte   `cbor:"2,keyasint"`
		Tokens  []uint32 `cbor:"3,keyasint"`
		Input   []byte   `cbor:"4,keyasint,omitempty"`
		Reason  string   `cbor:"5,keyasint,omitempty"`
	}
	now, err := cborx.Marshal(ledger.DisputeEvidence{Receipt: []byte{1}, Proofs: []byte{2}, Tokens: []uint32{3}, Input: []byte("in"), Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := cborx.Marshal(before{Receipt: []byte{1}, Proofs: []byte{2}, Tokens: []uint32{3}, Input: []byte("in"), Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(old) {
		t.Fatalf("record evidence encodes as %x, before as %x", now, old)
	}
}

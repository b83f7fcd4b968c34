package consensus_test

import (
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestRangeCheckersRefuseTampering tampers the same way with a payer range
// and a provider range of the same records and checks that both verifiers,
// which share one checker, refuse each: a changed proof value, a changed
// proof node, a wrong root, a record of another owner, a re-ordered list.
func TestRangeCheckersRefuseTampering(t *testing.T) {
	c, p, alice, bob, op := newMarket(t)
	q := newMachine(t)
	c.mustApply(c.sign(op, q.register(t, op.Account())))
	c.mustApply(
		c.sign(alice, &ledger.Settlement{Records: []receipt.PaymentRecord{
			p.record(t, alice, terms.Hash32{1}, 1), p.record(t, alice, terms.Hash32{2}, 2)}}),
		c.sign(bob, &ledger.Settlement{Records: []receipt.PaymentRecord{q.record(t, bob, terms.Hash32{3}, 3)}}))
	h := c.app.Height()
	root := c.app.AppHash()

	rr := c.recordRange(alice.Account(), h, h)
	pr := c.providerRange(p.MachineID(), h, h)
	if len(rr.Records) != 2 || len(pr.Records) != 2 {
		t.Fatalf("%d payer and %d provider records, want 2 each", len(rr.Records), len(pr.Records))
	}
	if err := consensus.VerifyRecordRange(root, rr); err != nil {
		t.Fatalf("payer range: %v", err)
	}
	if err := consensus.VerifyRecordRange(root, pr); err != nil {
		t.Fatalf("provider range: %v", err)
	}

	flip := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 1
		return b
	}
	otherRoot := flip(root)
	for _, tc := range []struct {
		name   string
		tamper func(proof *consensus.RangeProof, recs []ledger.SettledRecord, root *[]byte)
		want   error // nil: any error will do
	}{
		{"proof value changed", func(pf *consensus.RangeProof, _ []ledger.SettledRecord, _ *[]byte) {
			pf.Values[0] = flip(pf.Values[0])
		}, nil},
		{"proof node changed", func(pf *consensus.RangeProof, _ []ledger.SettledRecord, _ *[]byte) {
			pf.Nodes[0] = flip(pf.Nodes[0])
		}, nil},
		{"other root", func(_ *consensus.RangeProof, _ []ledger.SettledRecord, r *[]byte) { *r = otherRoot }, nil},
		{"records swapped", func(_ *consensus.RangeProof, recs []ledger.SettledRecord, _ *[]byte) {
			recs[0], recs[1] = recs[1], recs[0]
		}, consensus.ErrRecordMismatch},
		{"foreign record", func(_ *consensus.RangeProof, recs []ledger.SettledRecord, _ *[]byte) {
			recs[1].Record.Payer = bob.Account()
			recs[1].Record.Provider = q.MachineID()
		}, consensus.ErrForeignRecord},
	} {
		r1, rroot := rr, root
		r1.Proof = cloneProof(rr.Proof)
		r1.Records = append([]ledger.SettledRecord(nil), rr.Records...)
		tc.tamper(&r1.Proof, r1.Records, &rroot)
		err1 := consensus.VerifyRecordRange(rroot, r1)

		p1, proot := pr, root
		p1.Proof = cloneProof(pr.Proof)
		p1.Records = append([]ledger.SettledRecord(nil), pr.Records...)
		tc.tamper(&p1.Proof, p1.Records, &proot)
		err2 := consensus.VerifyRecordRange(proot, p1)

		for path, err := range map[string]error{"payer": err1, "provider": err2} {
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("%s, %s range: %v, want %v", tc.name, path, err, tc.want)
			}
		}
	}
}

// cloneProof copies a proof's slices so a tamper leaves the original whole.
func cloneProof(p consensus.RangeProof) consensus.RangeProof {
	p.Keys = append([][]byte(nil), p.Keys...)
	p.Values = append([][]byte(nil), p.Values...)
	p.Nodes = append([][]byte(nil), p.Nodes...)
	return p
}

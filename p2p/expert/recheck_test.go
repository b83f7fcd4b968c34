package expert

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// everySampler samples every batch: the re-execution tests need samples
// from one short generation, not the 1/64 a node keeps.
func everySampler(t *testing.T) *Sampler {
	t.Helper()
	s := mustSampler(t, 7)
	s.every = 1
	return s
}

// consistentLiar perturbs every output row it returns and signs the
// perturbed rows: its receipt commits to exactly what it sent, so every
// call-time check passes.
func consistentLiar(sess *identity.Session, req *Request, r *Response) *Response {
	for i := range r.Outputs {
		// The first value moved by 0.5: far beyond rounding (Tolerance), still finite.
		v := math.Float32frombits(binary.LittleEndian.Uint32(r.Outputs[i]))
		binary.LittleEndian.PutUint32(r.Outputs[i], math.Float32bits(v+0.5))
	}
	rc, err := Sign(sess, NewReceipt(sess, req, r.Outputs, time.Now()), false)
	if err != nil {
		return nil
	}
	r.Receipt = rc
	return r
}

func newRechecker(t *testing.T, redo Redoer) *Rechecker {
	t.Helper()
	samples, err := OpenSampleStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	evidence, err := OpenSampleStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := NewRechecker(samples, evidence, redo, NewMetrics(nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// TestConsistentLiarCaughtByRecheck: a holder answering wrong rows it
// signs passes every call-time check; its sampled batches, re-executed by
// a standby holder of the same expert, yield dispute evidence naming it,
// while the honest holders' batches match.
func TestConsistentLiarCaughtByRecheck(t *testing.T) {
	var mu sync.Mutex
	var sampled []*SampledBatch
	n := newMoENetWith(t, 5*time.Second, func(c *CallerConfig) {
		c.Sampler = everySampler(t)
		c.OnSample = func(b *SampledBatch) {
			mu.Lock()
			defer mu.Unlock()
			sampled = append(sampled, b)
		}
	})
	liar := n.holders[0]
	liar.rogue(t, n.comp, consistentLiar)
	tally := new(Tally)
	run(t, n.engine, WithTally(context.Background(), tally))
	if st := n.c.Stats(); len(st.Failures) != 0 || len(sampled) == 0 || st.Sampled != uint64(len(sampled)) {
		t.Fatalf("call-time checks: failures %v, %d sampled counted for %d handed over", st.Failures, st.Sampled, len(sampled))
	}
	rc := newRechecker(t, n.c) // the caller's standbys recompute
	var fromLiar int
	for _, b := range sampled {
		if err := rc.Store(b); err != nil {
			t.Fatal(err)
		}
		if string(b.Holder) == string(liar.peer) {
			fromLiar++
		}
	}
	if fromLiar == 0 || fromLiar == len(sampled) {
		t.Fatalf("%d of %d samples from the liar: want some from it and some from honest holders", fromLiar, len(sampled))
	}
	rc.RunOnce(context.Background())
	st := rc.Stats()
	if st.Mismatched != uint64(fromLiar) || st.Matched != uint64(len(sampled)-fromLiar) || st.Failed != 0 {
		t.Fatalf("recheck %+v, want %d mismatched and %d matched", st, fromLiar, len(sampled)-fromLiar)
	}
	evs, err := rc.Evidence()
	if err != nil || len(evs) != fromLiar {
		t.Fatalf("%d evidence kept (%v), want %d", len(evs), err, fromLiar)
	}
	for _, ev := range evs {
		ref := ev.Ref()
		if ref.Holder != liar.machine() || ref.ReceiptHash != Hash(ev.Batch.Receipt) {
			t.Fatalf("evidence names holder %x, want the liar's machine", ref.Holder[:4])
		}
		// The receipt in the evidence is the liar's own, verifiable
		// signature over the output it returned.
		r, err := Verify(nil, ev.Batch.Receipt, liar.machine(), liar.peer, time.Now())
		if err != nil || r.Entries[ev.Batch.Index].OutputHash != ev.ClaimedHash {
			t.Fatalf("evidence receipt does not verify as the liar's commitment: %v", err)
		}
		// The recomputed hash is the honest expert's output.
		in, _ := UnpackRows(ev.Batch.Input, int(ev.Batch.Dim))
		want, _ := n.comp.Compute(context.Background(), ev.Batch.Model, int(ev.Batch.Layer), int(ev.Batch.Expert), in)
		packed, _ := PackRows(want, int(ev.Batch.Dim))
		if ev.RecomputedHash != sha256.Sum256(packed) || ev.RecomputedHash == ev.ClaimedHash {
			t.Fatal("evidence's recomputed hash is not the honest output's")
		}
		if string(ev.RecomputedBy) == string(liar.peer) || len(ev.RecomputeReceipt) == 0 {
			t.Fatal("evidence recomputed by the liar itself, or without the standby's receipt")
		}
		// The call's tally marked the receipt sampled, and the binding of
		// the liar's usage to its record opens the dispute.
		var u *HolderUsage
		for _, h := range tally.Holders() {
			if h.Holder == liar.peer {
				u = &h
			}
		}
		if u == nil || !slices.Contains(u.Sampled, [32]byte(ref.ReceiptHash)) {
			t.Fatalf("the tally did not mark the evidence's receipt %s sampled", ref.ReceiptHash)
		}
		b := BindingOf(u, terms.AccountID{1}, terms.Hash32{2})
		if !b.Binds(ref.ReceiptHash) {
			t.Fatal("the binding does not list the evidence's receipt")
		}
		if _, err := ev.DisputeOpen(b.Payer, b.RequestDigest, b.ReceiptHashes, 1); err != nil {
			t.Fatalf("dispute from the binding: %v", err)
		}
	}
	if left, _ := rc.samples.List(); len(left) != 0 {
		t.Fatalf("%d samples left after a round that judged every one", len(left))
	}
}

// TestLocalRecheck: a node holding the weights itself recomputes; an
// honest batch matches, one apart by rounding is no evidence (a committee
// would acquit it), and a tampered one (re-signed) is evidence.
func TestLocalRecheck(t *testing.T) {
	n := newMoENet(t, 5*time.Second)
	h := n.holders[1]
	in := [][]float32{make([]float32, moeOptions().Dim)}
	in[0][3] = 0.5
	rows, _ := PackRows(in, len(in[0]))
	req := &Request{Network: testNetwork, Model: n.c.cfg.Model, Layer: 1, Dim: uint32(len(in[0])),
		Batches: []WireBatch{{Expert: 2, Positions: []uint32{4}, Rows: rows}}}
	out, _ := n.comp.Compute(context.Background(), req.Model, 1, 2, in)
	good, _ := PackRows(out, len(in[0]))
	// Rounding: the lowest mantissa bit of one value, as another SIMD path
	// may give; the same computation, as a committee would judge it.
	rounding := append([]byte(nil), good...)
	rounding[8] ^= 0x01
	bad := append([]byte(nil), good...)
	v := math.Float32frombits(binary.LittleEndian.Uint32(bad[8:]))
	binary.LittleEndian.PutUint32(bad[8:], math.Float32bits(v+0.25))
	redo := LocalRedo{Computer: n.comp, Self: n.caller.ID()}
	for _, tc := range []struct {
		output []byte
		caught bool
	}{{good, false}, {rounding, false}, {bad, true}} {
		rc, err := Sign(h.sess, NewReceipt(h.sess, req, [][]byte{tc.output}, time.Now()), false)
		if err != nil {
			t.Fatal(err)
		}
		b := &SampledBatch{Model: req.Model, Layer: 1, Dim: req.Dim, Expert: 2, Positions: []uint32{4}, Input: rows,
			Output: tc.output, Receipt: rc, Holder: []byte(h.peer), Machine: h.machine()}
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		ev, err := Recheck(context.Background(), b, redo, time.Now())
		if err != nil || (ev != nil) != tc.caught {
			t.Fatalf("recheck of a batch (tampered %v): evidence %v, err %v", tc.caught, ev != nil, err)
		}
		if ev != nil {
			if _, err := EncodeEvidence(ev); err != nil {
				t.Fatalf("evidence does not encode: %v", err)
			}
		}
	}
}

// failingRedo never recomputes.
type failingRedo struct{}

func (failingRedo) Redo(context.Context, *SampledBatch) (Redone, error) {
	return Redone{}, ErrNoHolder
}

// TestRecheckGivesUp: a batch no one can recompute is tried for a
// bounded number of rounds, then dropped, never turned into evidence.
func TestRecheckGivesUp(t *testing.T) {
	rc := newRechecker(t, failingRedo{})
	if err := rc.Store(validSample(t, newHolderIdentity(t))); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= maxRecheckTries; round++ {
		left, _ := rc.samples.List()
		if len(left) != 1 {
			t.Fatalf("round %d: %d samples kept, want the one still pending", round, len(left))
		}
		rc.RunOnce(context.Background())
	}
	left, _ := rc.samples.List()
	evs, _ := rc.Evidence()
	if st := rc.Stats(); len(left) != 0 || len(evs) != 0 || st.Failed != maxRecheckTries || st.Mismatched != 0 {
		t.Fatalf("after %d failed rounds: %d samples, %d evidence, stats %+v", maxRecheckTries, len(left), len(evs), st)
	}
}

package validator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// modelComputer runs experts of one model, as a holder's Computer does.
type modelComputer struct{ m *llm.Model }

func (c modelComputer) Compute(_ context.Context, _ [32]byte, layer, e int, rows [][]float32) ([][]float32, error) {
	return c.m.ExpertForward(layer, e, rows, 1)
}

// holderCall is one call's work of the net's machine as an expert holder
// computing with m: three exchanges of layer 1, each a batch of experts 0
// and 1 over three rows, signed as expert receipts and paid for by the
// buyer in one settled payment record. It returns the holder's usage, the
// record's request digest and, per exchange, its expert-1 batch in full.
func (dn *disputeNet) holderCall(m *llm.Model) (expert.HolderUsage, terms.Hash32, []expert.SampledBatch) {
	t := dn.t
	t.Helper()
	dim := m.Cfg.Dim
	dn.n++
	u := expert.HolderUsage{Holder: dn.machine.PeerID, Machine: dn.machine.MachineID(), Price: 1}
	var batches []expert.SampledBatch
	for i := range 3 {
		req := &expert.Request{Model: dn.model, Layer: 1, Dim: uint32(dim)}
		var outs [][]byte
		for e := range 2 {
			in := make([][]float32, 3)
			for r := range in {
				in[r] = make([]float32, dim)
				for k := range in[r] {
					in[r][k] = float32((dn.n*7+i*5+e*3+r+k)%17)/8 - 1
				}
			}
			out, err := m.ExpertForward(1, e, in, 1)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := expert.PackRows(in, dim)
			packed, _ := expert.PackRows(out, dim)
			pos := []uint32{uint32(3 * i), uint32(3*i + 1), uint32(3*i + 2)}
			req.Batches = append(req.Batches, expert.WireBatch{Expert: uint32(e), Positions: pos, Rows: rows})
			outs = append(outs, packed)
		}
		env, err := expert.Sign(dn.machine.Session, expert.NewReceipt(dn.machine.Session, req, outs, time.Now()), false)
		if err != nil {
			t.Fatal(err)
		}
		u.Receipts = append(u.Receipts, env)
		u.ExpertTokens += 6
		w := req.Batches[1]
		batches = append(batches, expert.SampledBatch{Model: dn.model, Layer: 1, Dim: uint32(dim), Expert: 1, Positions: w.Positions,
			Input: w.Rows, Output: outs[1], Receipt: env, Index: 1, Holder: []byte(dn.machine.PeerID), Machine: dn.machine.MachineID()})
	}
	digest := terms.Hash32(sha256.Sum256(fmt.Appendf(nil, "expert call %d", dn.n)))
	rec := receipt.PaymentRecord{Payer: acct(dn.buyer), Provider: dn.machine.MachineID(), RequestDigest: digest, QuoteDigest: u.ReceiptsHash(),
		Price: 5000, Units: u.ExpertTokens, Receipt: u.Receipts[0], ReceiptHash: sha256.Sum256(u.Receipts[0]),
		ExpiryHeight: dn.net.Nodes[0].App().Height() + 200}
	if err := ledger.NewSigner(dn.buyer, dn.net.ChainID).SignRecord(&rec); err != nil {
		t.Fatal(err)
	}
	dn.submit(dn.op, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}})
	return u, digest, batches
}

// disputeBatch opens the dispute of ev and returns its ID and height.
func (dn *disputeNet) disputeBatch(ev *expert.Evidence, u expert.HolderUsage, digest terms.Hash32) (terms.Hash32, int64) {
	dn.t.Helper()
	open, err := ev.DisputeOpen(acct(dn.buyer), digest, u.ReceiptHashes(), 1000)
	if err != nil {
		dn.t.Fatal(err)
	}
	res := dn.submit(dn.dis, open)
	return ledger.DisputeID(open.Subject), res.Height
}

// waitSettledAt waits until node has the record of payer's request settled.
func (dn *disputeNet) waitSettledAt(node *consensus.Node, payer terms.AccountID, digest terms.Hash32) {
	for {
		_, settled, err := node.Record(dn.ctx, payer, digest)
		if err == nil && settled {
			return
		}
		select {
		case <-dn.ctx.Done():
			dn.t.Fatalf("record %s of %s not settled at %s: %v (%v)", digest, payer, node.NodeID(), err, context.Cause(dn.ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// disputeByDisputer has a serving provider's ExpertDisputer, bonding from
// the disputer's account, take ev to the chain: it waits while no binding
// names the batch's receipt, opens the dispute once one does, and after a
// restart that lost its mark (a crash between the opening and the mark)
// finds the dispute on chain and posts no second bond. elsewhere, the
// evidence of another batch as if recomputed at another holder, is never
// disputed. It returns the dispute's ID and the height it opened at.
func (dn *disputeNet) disputeByDisputer(ev, elsewhere *expert.Evidence, u expert.HolderUsage, digest terms.Hash32, bond uint64) (terms.Hash32, int64) {
	t := dn.t
	t.Helper()
	dir := t.TempDir()
	store := func(name string) *expert.SampleStore {
		s, err := expert.OpenSampleStore(filepath.Join(dir, name), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	evidence, bindings := store("evidence"), store("bindings")
	disputer := func() *provider.ExpertDisputer {
		d, err := provider.NewExpertDisputer(provider.ExpertDisputerConfig{Evidence: evidence, Bindings: bindings,
			Disputed: store("disputed"), Chain: dn.net.Nodes[1], Account: dn.sub(dn.dis), Bond: bond, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	enc, err := expert.EncodeEvidence(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := evidence.Put(ev.Batch.ID(), enc); err != nil {
		t.Fatal(err)
	}
	// Evidence recomputed at another holder (its receipt kept) is never
	// bonded on automatically.
	elsewhere.RecomputeReceipt = []byte("a standby's receipt")
	if enc, err = expert.EncodeEvidence(elsewhere); err != nil {
		t.Fatal(err)
	}
	if _, err := evidence.Put(elsewhere.Batch.ID(), enc); err != nil {
		t.Fatal(err)
	}
	d := disputer()
	before := dn.balance(dn.dis)
	if d.Round(dn.ctx); d.Stats() != (provider.DisputeStats{Refused: 1}) || dn.balance(dn.dis) != before {
		t.Fatalf("without a binding: %+v, balance %d (was %d)", d.Stats(), dn.balance(dn.dis), before)
	}
	b, err := expert.EncodeBinding(expert.BindingOf(&u, acct(dn.buyer), digest))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bindings.Put(ev.Ref().ReceiptHash, b); err != nil {
		t.Fatal(err)
	}
	// The disputer reads node 1, which may not yet have committed the
	// block that settled the record at node 0.
	dn.waitSettledAt(dn.net.Nodes[1], acct(dn.buyer), digest)
	if d.Round(dn.ctx); d.Stats() != (provider.DisputeStats{Opened: 1, Refused: 1}) || dn.balance(dn.dis) != before-bond {
		t.Fatalf("with the binding: %+v, balance %d, want %d less the bond %d", d.Stats(), dn.balance(dn.dis), before, bond)
	}
	open, err := ev.DisputeOpen(acct(dn.buyer), digest, u.ReceiptHashes(), bond)
	if err != nil {
		t.Fatal(err)
	}
	id := ledger.DisputeID(open.Subject)
	got, ok, err := dn.net.Nodes[0].Dispute(dn.ctx, id)
	if err != nil || !ok || got.Bond != bond {
		t.Fatalf("dispute %s on chain: %+v %v %v", id, got, ok, err)
	}
	if d.Round(dn.ctx); d.Stats() != (provider.DisputeStats{Opened: 1, Refused: 1}) {
		t.Fatalf("a second round took the evidence again: %+v", d.Stats())
	}
	// A restart that lost the mark.
	if err := os.RemoveAll(filepath.Join(dir, "disputed")); err != nil {
		t.Fatal(err)
	}
	d = disputer()
	if d.Round(dn.ctx); d.Stats() != (provider.DisputeStats{Known: 1, Refused: 1}) || dn.balance(dn.dis) != before-bond {
		t.Fatalf("after losing the mark: %+v, balance %d, want %d", d.Stats(), dn.balance(dn.dis), before-bond)
	}
	return id, got.OpenHeight
}

// TestDutyConvictsPerturbedExpert: an expert holder computing with other
// weights under the model's ID (the same MoE shape from another seed)
// signs its wrong rows consistently, so only re-execution catches it: the
// disputer's re-check on the real weights yields evidence, the committee
// (validators holding the real MoE weights, re-running the one expert)
// convicts within the verdict limit, the holder's bond is slashed by the
// governed share, the disputer is paid and the holder's payment for the
// call goes back to the payer. An honest holder's batch disputed falsely
// is acquitted and the disputer's bond goes to its operator. A second
// wrong batch of the lying call is convicted without a second slash. A
// wrong batch no validator can judge is refused at once, bond untouched
// (disputeWithoutCommittee).
func TestDutyConvictsPerturbedExpert(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	o.MoE, o.Layers, o.Dim, o.Heads, o.FFN, o.Vocab = true, 2, 64, 4, 128, 320
	dirs := heldModels(t, dir, o)
	real := openGenerated(t, filepath.Join(dir, "holder"), o)
	other := o
	other.Seed = 2
	perturbed := openGenerated(t, filepath.Join(dir, "perturbed"), other)
	dn := startDisputeNet(t, dirs, 20)
	if real.Info().ID != inference.ModelID(dn.model) {
		t.Fatalf("held model %s, holder's %s", dn.model, real.Info().ID)
	}
	redo := expert.LocalRedo{Computer: modelComputer{real.Model()}, Self: "disputer"}

	bond, disBefore, opBefore := dn.provider().Bond, dn.balance(dn.dis), dn.balance(dn.op)
	u, digest, batches := dn.holderCall(perturbed.Model())
	opPaid := dn.balance(dn.op) - opBefore
	ev, err := expert.Recheck(dn.ctx, &batches[1], redo, time.Now())
	if err != nil || ev == nil {
		t.Fatalf("re-check of a perturbed holder's batch: evidence %v, %v", ev, err)
	}
	// The serving provider's disputer opens it, once it has the binding of
	// the batch's receipt to the settled record (kept as records are
	// signed), and never twice.
	ev0, err := expert.Recheck(dn.ctx, &batches[0], redo, time.Now())
	if err != nil || ev0 == nil {
		t.Fatalf("re-check of a perturbed holder's first batch: evidence %v, %v", ev0, err)
	}
	id, opened := dn.disputeByDisputer(ev, ev0, u, digest, 1000)
	d := dn.verdict(id)
	wantSlash := ledger.DisputeSlash(dn.params, bond, d.Credited)
	if d.Status != ledger.DisputeGuilty || d.ResolveHeight-opened > int64(dn.params.DisputeVerdictBlocks) || d.Slashed != wantSlash {
		t.Fatalf("perturbed expert: %s at %d (opened %d, limit %d blocks), slashed %d want %d", d.Status, d.ResolveHeight, opened,
			dn.params.DisputeVerdictBlocks, d.Slashed, wantSlash)
	}
	t.Logf("guilty batch: opened at %d, committee at %d, verdict at %d: %d blocks (limit %d)",
		opened, d.Current().DrawHeight, d.ResolveHeight, d.ResolveHeight-opened, dn.params.DisputeVerdictBlocks)
	if p := dn.provider(); p.Bond != bond-wantSlash || p.SlashedUntil == 0 {
		t.Fatalf("holder after conviction: bond %d (was %d), slashed until %d", p.Bond, bond, p.SlashedUntil)
	}
	if got := dn.balance(dn.dis); got != disBefore+d.Reward || d.Reward == 0 {
		t.Fatalf("disputer balance %d, want %d + reward %d", got, disBefore, d.Reward)
	}
	if d.Reversed != opPaid || opPaid == 0 || dn.balance(dn.op) != opBefore {
		t.Fatalf("holder's payment %d for the call, reversed %d; operator has %d, had %d", opPaid, d.Reversed, dn.balance(dn.op), opBefore)
	}

	// Another wrong batch of the same call, the same lying episode: the
	// committee convicts again, but the bond is slashed once and the
	// call's payment was reversed already; the disputer gets its bond back.
	disBefore, bond = dn.balance(dn.dis), dn.provider().Bond
	id2, _ := dn.disputeBatch(ev0, u, digest)
	if d2 := dn.verdict(id2); d2.Status != ledger.DisputeGuilty || d2.Slashed != 0 || d2.Reward != 0 || d2.Reversed != 0 {
		t.Fatalf("second wrong batch of the episode: %+v, want guilty, nothing slashed or reversed", d2)
	}
	if p := dn.provider(); p.Bond != bond || !p.Barred {
		t.Fatalf("holder after the episode's second conviction: %+v, bond was %d", p, bond)
	}
	if got := dn.balance(dn.dis); got != disBefore {
		t.Fatalf("disputer has %d after the episode's second conviction, want its bond back: %d", got, disBefore)
	}

	// An honest holder (re-bonded: until then no record pays it): the
	// re-check finds nothing; a disputer claiming otherwise loses its bond.
	dn.rebond()
	bond, disBefore, opBefore = dn.provider().Bond, dn.balance(dn.dis), dn.balance(dn.op)
	u, digest, batches = dn.holderCall(real.Model())
	if ev, err := expert.Recheck(dn.ctx, &batches[2], redo, time.Now()); err != nil || ev != nil {
		t.Fatalf("re-check of an honest batch: evidence %v, %v", ev, err)
	}
	b := batches[2]
	lie := &expert.Evidence{Batch: b, InputHash: sha256.Sum256(b.Input), ClaimedHash: sha256.Sum256(b.Output),
		RecomputedHash: sha256.Sum256([]byte("a lie")), RecomputedBy: []byte("disputer")}
	id, opened = dn.disputeBatch(lie, u, digest)
	dn.acquitted(t, "batch", "holder", id, opened, bond, disBefore)
	if got := dn.balance(dn.op); got < opBefore+1000 {
		t.Fatalf("honest holder's operator has %d, want at least %d + the forfeited bond", got, opBefore)
	}
	dn.disputeWithoutCommittee(redo, perturbed.Model())
}

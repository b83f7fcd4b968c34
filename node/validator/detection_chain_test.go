package validator

import (
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// chainVerdictLimit is the verdict limit of TestDisputeDetectionOnChain:
// the experiment's target is a verdict within 100 blocks.
const chainVerdictLimit = 100

// TestDisputeDetectionOnChain takes the detection experiment through a
// real chain: four validators running the committee duty on their own
// copies of the weights, a provider whose answers settle, and a disputer
// naming, for each, the first chunk it finds failing (the last chunk of
// the honest answer). Every cheat is convicted and the honest answer
// acquitted, each in its first round within chainVerdictLimit blocks;
// the blocks from opening to verdict are logged per kind.
func TestDisputeDetectionOnChain(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	dirs := heldModels(t, dir, o)
	m := openDetectionModels(t, filepath.Join(dir, "provider"), o)
	dn := startDisputeNet(t, dirs, chainVerdictLimit)
	if m.real.Info().ID != inference.ModelID(dn.model) {
		t.Fatalf("held model %s, provider's %s", dn.model, m.real.Info().ID)
	}
	in := detectionInput(1, 40)
	honest := generate(t, m.real, in)
	kinds := []string{"honest", "other seed", "extended", "truncated (forced stop)", "Q8_0 for F32"}
	var recs []receipt.PaymentRecord
	var opens []any
	var ids []terms.Hash32
	for _, kind := range kinds {
		a := honest
		if kind != "honest" {
			a = m.cheat(t, kind, in, honest)
		}
		subj, rec, ev := dn.settleable(a)
		c := firstFailing(t, m.real, ev)
		switch {
		case kind == "honest" && c >= 0:
			t.Fatalf("the honest answer fails at chunk %d for its disputer", c)
		case kind == "honest":
			c = len(a.proofs) - 1 // a false disputer names the costliest
		case c < 0:
			t.Fatalf("%s: no chunk fails for the disputer", kind)
		}
		ev.Chunk = uint32(c)
		recs = append(recs, rec)
		opens = append(opens, &ledger.DisputeOpen{Subject: subj, Bond: ledger.DisputeBond(dn.params, rec.Price, ev.Chunk), Evidence: ev})
		ids = append(ids, ledger.DisputeID(subj))
	}
	dn.submit(dn.op, &ledger.Settlement{Records: recs})
	res, errs := dn.sub(dn.dis).SubmitMany(dn.ctx, opens)
	for i, kind := range kinds {
		if errs[i] != nil {
			t.Fatalf("%s: dispute not opened: %v", kind, errs[i])
		}
		d := dn.verdict(ids[i])
		want := ledger.DisputeGuilty
		if kind == "honest" {
			want = ledger.DisputeInnocent
		}
		blocks := d.ResolveHeight - res[i].Height
		if d.Status != want || len(d.Rounds) != 1 || blocks > chainVerdictLimit {
			t.Errorf("%s (chunk %d): %s after %d rounds, %d blocks (limit %d)", kind, opens[i].(*ledger.DisputeOpen).Evidence.Chunk, d.Status, len(d.Rounds), blocks, chainVerdictLimit)
			continue
		}
		t.Logf("%-24s chunk %d: %s in %d blocks (opened at %d)", kind, opens[i].(*ledger.DisputeOpen).Evidence.Chunk, d.Status, blocks, res[i].Height)
	}
}

package validator

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestFirstFailingChunk: the disputer's search finds no failing chunk in
// an honest answer, chunk 0 of an answer from other weights, and the
// tail chunk of an answer extended past what the model sampled (its first
// chunk is the honest one and verifies); it refuses, rather than naming a
// chunk, weights of another model than the receipt's, evidence that is
// not what the provider signed and an expert batch.
func TestFirstFailingChunk(t *testing.T) {
	m := openDetectionModels(t, t.TempDir(), modelgen.DevnetOptions())
	mach := testMachine(t, filepath.Join(t.TempDir(), "machine"))
	ctx, model := context.Background(), m.real.Info().ID
	in := detectionInput(1, 40)
	honest := generate(t, m.real, in)
	if len(honest.proofs) != 2 {
		t.Fatalf("honest answer of %d tokens has %d chunks, want 2", len(honest.tokens), len(honest.proofs))
	}
	for _, tc := range []struct {
		kind string
		want int
	}{{"honest", -1}, {"other weights", 0}, {"extended", -2}} {
		a := honest
		if tc.kind != "honest" {
			a = m.cheat(t, tc.kind, in, honest)
		}
		if tc.want == -2 {
			tc.want = len(a.proofs) - 1
		}
		c, why, err := FirstFailingChunk(ctx, m.real, signAnswer(t, mach, model, make([]byte, 16), a))
		if err != nil || c != tc.want || why == "" {
			t.Errorf("%s: chunk %d (%s) %v, want chunk %d", tc.kind, c, why, err, tc.want)
		}
	}

	ev := signAnswer(t, mach, model, make([]byte, 16), honest)
	if c, _, err := FirstFailingChunk(ctx, m.other, ev); err == nil || !strings.Contains(err.Error(), "receipt names model") {
		t.Errorf("other model's weights: chunk %d, %v; want refused", c, err)
	}
	bent := ev
	bent.Tokens = append(append([]uint32(nil), ev.Tokens...), 0)
	if c, _, err := FirstFailingChunk(ctx, m.real, bent); !errors.Is(err, errUnverifiable) {
		t.Errorf("a token appended: chunk %d, %v; want unverifiable", c, err)
	}
	batch := ev
	batch.ReceiptHashes = []terms.Hash32{{1}}
	if c, _, err := FirstFailingChunk(ctx, m.real, batch); err == nil {
		t.Errorf("expert batch evidence: chunk %d, no error", c)
	}
}

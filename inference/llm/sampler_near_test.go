package llm

import (
	"testing"

	"github.com/tenzrod/tenzrod/inference"
)

// TestSampleNear: a committee's check of a signed token forgives a tie
// decided by rounding and nothing else. At greedy decoding a token whose
// logit is within rounding of the largest is forgiven, one a visible
// margin below is not; when sampling, the drawn token is, and a token far
// from the draw is not, at every position of a few hundred.
func TestSampleNear(t *testing.T) {
	greedy := inference.Sampling{}
	logits := []float32{0.5, 2, 2 - 1e-7, 1.9}
	if Sample(logits, greedy, 0) != 1 || !SampleNear(logits, greedy, 0, 1) || !SampleNear(logits, greedy, 0, 2) {
		t.Fatalf("greedy: drew %d; near 1 %v, near 2 (a rounding below) %v", Sample(logits, greedy, 0),
			SampleNear(logits, greedy, 0, 1), SampleNear(logits, greedy, 0, 2))
	}
	if SampleNear(logits, greedy, 0, 3) || SampleNear(logits, greedy, 0, 0) || SampleNear(logits, greedy, 0, 9) {
		t.Fatal("greedy: a token a visible margin below the top (or outside the vocabulary) forgiven")
	}
	sp := inference.Sampling{Temperature: 1, TopP: 0.95, Seed: 7}
	flat := make([]float32, 64)
	for i := range flat {
		flat[i] = float32(i%8) / 4
	}
	far := 0
	for pos := range 300 {
		d := Sample(flat, sp, pos)
		if !SampleNear(flat, sp, pos, d) {
			t.Fatalf("pos %d: the drawn token %d not forgiven", pos, d)
		}
		// The token with the same logit furthest away in the
		// candidates' order is far from the draw.
		other := (d + 32) % 64
		if other%8 != d%8 {
			t.Fatalf("pos %d: tokens %d and %d differ in logit", pos, d, other)
		}
		if SampleNear(flat, sp, pos, other) {
			far++
		}
	}
	if far != 0 {
		t.Fatalf("%d of 300 draws forgave a token far from the draw", far)
	}
}

// SampleNear is the check Resample makes through sampleNear, for the
// tests: whether Sample at pos draws id, or would if its logits or its
// uniform draw moved by nearSlack (at greedy decoding, id's logit within
// nearSlack·(1+|max|) of the largest; when sampling, the draw within
// nearSlack of id's share of the distribution). A committee checks a
// signed token this way so that a near tie, decided by rounding, never
// convicts.
func SampleNear(logits []float32, sp inference.Sampling, pos, id int) bool {
	drawn, near := sampleNear(logits, sp, pos, id)
	return drawn == id || near
}

package validator

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// TestJudgeNamedChunk: the committee judges only the chunk a dispute
// names. An answer whose first chunk is committed from the real weights
// and whose second from a Q8_0 copy is convicted when the second is
// named, and acquitted when the first (which verifies) is: the disputer
// who names a chunk that verifies loses, whatever the others hold.
func TestJudgeNamedChunk(t *testing.T) {
	o := modelgen.DevnetOptions()
	m := openDetectionModels(t, t.TempDir(), o)
	in := detectionInput(1, 40)
	honest := generate(t, m.real, in)
	if len(honest.proofs) != 2 {
		t.Fatalf("honest answer of %d tokens has %d chunks, want 2", len(honest.tokens), len(honest.proofs))
	}
	prompt, err := m.real.EncodePrompt(inferenceRequest(in))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(honest.tokens))
	for i, id := range honest.tokens {
		ids[i] = int(id)
	}
	ctx := context.Background()
	real, err := m.real.Score(ctx, prompt, ids, commit.TopK)
	if err != nil {
		t.Fatal(err)
	}
	cheap, err := m.q8.Score(ctx, prompt, ids, commit.TopK)
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := commit.Build(append(real[:commit.StepsPerChunk:commit.StepsPerChunk], cheap[commit.StepsPerChunk:]...), m.real.Info().VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	lie := honest
	lie.proofs = mixed
	mach, err := ledgertest.NewMachine(filepath.Join(t.TempDir(), "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mach.Close() })
	ev := signAnswer(t, mach, m.real.Info().ID, make([]byte, 16), lie)
	for chunk, want := range []ledger.Verdict{ledger.VerdictInnocent, ledger.VerdictGuilty} {
		ev.Chunk = uint32(chunk)
		if v, why, err := judge(ctx, m.judge, ev, commit.DefaultTolerance); v != want || err != nil {
			t.Errorf("chunk %d named: %s (%s) %v, want %s", chunk, v, why, err, want)
		}
	}
	if c := firstFailing(t, m.real, ev); c != 1 {
		t.Errorf("the disputer's first failing chunk is %d, want 1", c)
	}
	ev.Chunk = 2
	if v, _, err := judge(ctx, m.judge, ev, commit.DefaultTolerance); v != ledger.VerdictInnocent || !errors.Is(err, errUnverifiable) {
		t.Errorf("chunk past the last: %s %v, want innocent and unverifiable", v, err)
	}
}

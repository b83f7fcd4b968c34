package llm_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

func moeOptions() modelgen.GenOptions {
	o := tinyOptions()
	o.MoE, o.Experts, o.ExpertsUsed = true, 4, 2
	return o
}

func TestExpertForwardIsPerRow(t *testing.T) {
	e := open(t, moeOptions(), llm.Options{})
	m := e.Model()
	if e.Info().Experts != 4 || e.Info().ExpertsUsed != 2 {
		t.Fatalf("info %+v", e.Info())
	}
	rng := rand.New(rand.NewPCG(3, 3))
	rows := make([][]float32, 9)
	for i := range rows {
		rows[i] = make([]float32, m.Cfg.Dim)
		for j := range rows[i] {
			rows[i][j] = float32(rng.NormFloat64())
		}
	}
	batch, err := m.ExpertForward(1, 2, rows, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		one, err := m.ExpertForward(1, 2, [][]float32{r}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one[0], batch[i]) {
			t.Fatalf("row %d differs between batch and single-row runs", i)
		}
	}
	other, _ := m.ExpertForward(1, 3, rows[:1], 1)
	if reflect.DeepEqual(other[0], batch[0]) {
		t.Fatal("two experts computed the same output")
	}
	for _, bad := range []struct{ l, e, dim int }{{-1, 0, m.Cfg.Dim}, {0, 4, m.Cfg.Dim}, {0, 0, 3}} {
		if _, err := m.ExpertForward(bad.l, bad.e, [][]float32{make([]float32, bad.dim)}, 1); err == nil {
			t.Errorf("ExpertForward(%d, %d, dim %d) accepted", bad.l, bad.e, bad.dim)
		}
	}
}

func TestExpertHook(t *testing.T) {
	o := moeOptions()
	req := inference.GenerateRequest{Messages: chat("Tell me about markets"), Sampling: inference.Sampling{Temperature: 0.8, Seed: 4, MaxTokens: 24}, LogProbs: 4}
	local := generate(t, open(t, o, llm.Options{}), req)
	var calls, rows atomic.Int64
	var m *llm.Model
	hooked := open(t, o, llm.Options{Expert: func(ctx context.Context, layer, expert int, in [][]float32) ([][]float32, error) {
		calls.Add(1)
		rows.Add(int64(len(in)))
		return m.ExpertForward(layer, expert, in, 1)
	}})
	m = hooked.Model()
	remote := generate(t, hooked, req)
	if !reflect.DeepEqual(local.tokens, remote.tokens) {
		t.Fatal("experts run through the hook changed the generation")
	}
	// Each position of each layer is routed to exactly ExpertsUsed experts.
	positions := int64(len(remote.res.Prompt) + len(remote.res.Tokens) - 1)
	if want := positions * int64(o.Layers*o.ExpertsUsed); rows.Load() != want {
		t.Fatalf("hook saw %d rows, want %d", rows.Load(), want)
	}
	if calls.Load() >= rows.Load() {
		t.Fatalf("prefill did not batch rows per expert: %d calls for %d rows", calls.Load(), rows.Load())
	}
	fail := errors.New("holder gone")
	broken := open(t, o, llm.Options{Expert: func(context.Context, int, int, [][]float32) ([][]float32, error) { return nil, fail }})
	if _, err := broken.Generate(context.Background(), req, func(inference.Token) error { return nil }); !errors.Is(err, fail) {
		t.Fatalf("hook error: %v", err)
	}
	short := open(t, o, llm.Options{Expert: func(_ context.Context, _, _ int, in [][]float32) ([][]float32, error) { return in[:len(in)-1], nil }})
	if _, err := short.Generate(context.Background(), req, func(inference.Token) error { return nil }); err == nil {
		t.Fatal("hook returning too few rows accepted")
	}
}

func TestExpertLayerHook(t *testing.T) {
	o := moeOptions()
	req := inference.GenerateRequest{Messages: chat("Tell me about markets"), Sampling: inference.Sampling{Temperature: 0.8, Seed: 4, MaxTokens: 24}}
	local := generate(t, open(t, o, llm.Options{}), req)
	var calls, batches atomic.Int64
	var m *llm.Model
	hooked := open(t, o, llm.Options{ExpertLayer: func(ctx context.Context, layer int, in []llm.ExpertBatch) ([][][]float32, error) {
		calls.Add(1)
		batches.Add(int64(len(in)))
		out := make([][][]float32, len(in))
		for i, b := range in {
			if i > 0 && b.Expert <= in[i-1].Expert {
				t.Errorf("batches not in ascending expert order: %d after %d", b.Expert, in[i-1].Expert)
			}
			var err error
			if out[i], err = m.ExpertForward(layer, b.Expert, b.Rows, 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}})
	m = hooked.Model()
	remote := generate(t, hooked, req)
	if !reflect.DeepEqual(local.tokens, remote.tokens) {
		t.Fatal("experts run through the layer hook changed the generation")
	}
	// One call per MoE layer per forward pass, each with every expert used.
	if calls.Load() == 0 || calls.Load()%int64(o.Layers) != 0 || batches.Load() < calls.Load() {
		t.Fatalf("%d layer calls with %d batches for %d layers", calls.Load(), batches.Load(), o.Layers)
	}
	short := open(t, o, llm.Options{ExpertLayer: func(_ context.Context, _ int, in []llm.ExpertBatch) ([][][]float32, error) {
		return make([][][]float32, len(in)-1), nil
	}})
	if _, err := short.Generate(context.Background(), req, func(inference.Token) error { return nil }); err == nil {
		t.Fatal("layer hook returning too few batches accepted")
	}
}

// TestPromptTokenizerMoEShape: a gateway holding a model's files reads
// its MoE shape with the tokenizer: every layer, top-k experts; a dense
// model has none.
func TestPromptTokenizerMoEShape(t *testing.T) {
	for _, tc := range []struct {
		opts         modelgen.GenOptions
		layers, topK int
	}{{moeOptions(), 2, 2}, {tinyOptions(), 0, 0}} {
		dir := model(t, tc.opts)
		pt, err := llm.OpenTokenizer(dir, open(t, tc.opts, llm.Options{}).Info().ID)
		if err != nil {
			t.Fatal(err)
		}
		if l, k, known := pt.MoEShape(); !known || l != tc.layers || k != tc.topK {
			t.Fatalf("shape %d layers, top-%d (known %v), want %d, %d", l, k, known, tc.layers, tc.topK)
		}
	}
}

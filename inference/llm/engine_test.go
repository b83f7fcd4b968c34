package llm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

type run struct {
	res    inference.Result
	tokens []inference.Token
}

func generate(t testing.TB, e inference.Engine, req inference.GenerateRequest) run {
	t.Helper()
	var r run
	var err error
	r.res, err = e.Generate(context.Background(), req, func(tok inference.Token) error {
		r.tokens = append(r.tokens, tok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i, tok := range r.tokens {
		text.WriteString(tok.Text)
		if want := i == len(r.tokens)-1; tok.Last != want {
			t.Fatalf("token %d of %d: Last = %v", i, len(r.tokens), tok.Last)
		}
		for _, alt := range tok.TopK {
			if alt.ID == tok.ID && alt.LogProb != tok.LogProb {
				t.Fatalf("token %d: log-prob %v, but %v among its top-k", i, tok.LogProb, alt.LogProb)
			}
		}
		if len(tok.TopK) > 0 && (tok.LogProb > tok.TopK[0].LogProb || tok.LogProb >= 0) {
			t.Fatalf("token %d: log-prob %v above the most likely's %v, or not negative", i, tok.LogProb, tok.TopK[0].LogProb)
		}
	}
	if text.String() != r.res.Text {
		t.Fatalf("streamed text %q != result text %q", text.String(), r.res.Text)
	}
	return r
}

func TestDeterministicAcrossThreadsAndBatches(t *testing.T) {
	for _, q := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeQ8_0} {
		o := withQuant(tinyOptions(), q)
		req := inference.GenerateRequest{
			Messages: chat("Tell me about the weather in the mountains."),
			Sampling: inference.Sampling{Temperature: 0.9, TopP: 0.95, Seed: 42, MaxTokens: 48},
			LogProbs: 4,
		}
		base := generate(t, open(t, o, llm.Options{Threads: 1, PrefillChunk: 64}), req)
		if len(base.res.Tokens) == 0 {
			t.Fatal("no tokens")
		}
		for _, eo := range []llm.Options{{Threads: 2, PrefillChunk: 1}, {Threads: 3, PrefillChunk: 5}, {Threads: 8, PrefillChunk: 7}} {
			e := open(t, o, eo)
			got := generate(t, e, req)
			if !reflect.DeepEqual(got.tokens, base.tokens) || !reflect.DeepEqual(got.res, base.res) {
				t.Fatalf("%v threads %d chunk %d: generation differs", q, eo.Threads, eo.PrefillChunk)
			}
			// One prefill over prompt+output reproduces every step's top-k, bit for bit.
			scored, err := e.Score(context.Background(), base.res.Prompt, base.res.Tokens, 4)
			if err != nil {
				t.Fatal(err)
			}
			for i, tok := range base.tokens {
				if !reflect.DeepEqual(scored[i], tok.TopK) {
					t.Fatalf("%v threads %d chunk %d: step %d: score %v, generate %v", q, eo.Threads, eo.PrefillChunk, i, scored[i], tok.TopK)
				}
			}
		}
		other := req
		other.Sampling.Seed = 43
		if reflect.DeepEqual(generate(t, open(t, o, llm.Options{}), other).res.Tokens, base.res.Tokens) {
			t.Fatalf("%v: another seed gave the same tokens", q)
		}
	}
}

func TestContinuationMatchesUncut(t *testing.T) {
	for _, o := range []modelgen.GenOptions{tinyOptions(), archOptions()["gemma3"]} {
		continuationMatchesUncut(t, o)
	}
}

func continuationMatchesUncut(t *testing.T, o modelgen.GenOptions) {
	a := open(t, o, llm.Options{Threads: 1})
	b := open(t, o, llm.Options{Threads: 3, PrefillChunk: 3})
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 12 {
		req := inference.GenerateRequest{
			Messages: chat([]string{"Hello!", "What is the capital of France?", "Write a story about a fox."}[i%3]),
			Sampling: inference.Sampling{Temperature: []float64{0, 0.7, 1.2}[i%3], TopK: []int{0, 40, 0}[i%3], TopP: []float64{0, 0, 0.9}[i%3], Seed: uint64(i), MaxTokens: 40},
		}
		full := generate(t, a, req)
		n := len(full.res.Tokens)
		if n < 2 {
			continue
		}
		cut := 1 + rng.IntN(n-1)
		resumed := req
		resumed.Continuation = full.res.Tokens[:cut]
		rest := generate(t, b, resumed)
		got := append(append([]int{}, full.res.Tokens[:cut]...), rest.res.Tokens...)
		if !reflect.DeepEqual(got, full.res.Tokens) {
			t.Fatalf("request %d cut at %d: resumed %v, uncut %v", i, cut, got, full.res.Tokens)
		}
		var head strings.Builder
		for _, tok := range full.tokens[:cut] {
			head.WriteString(tok.Text)
		}
		if head.String()+rest.res.Text != full.res.Text || rest.res.FinishReason != full.res.FinishReason {
			t.Fatalf("request %d cut at %d: text %q + %q != %q", i, cut, head.String(), rest.res.Text, full.res.Text)
		}
		if rest.tokens[0].Pos != full.tokens[cut].Pos {
			t.Fatalf("resumed at position %d, want %d", rest.tokens[0].Pos, full.tokens[cut].Pos)
		}
	}
}

func TestStopSequences(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{})
	req := inference.GenerateRequest{Prompt: "Once upon a time", Sampling: inference.Sampling{Temperature: 0.8, Seed: 1, MaxTokens: 60}}
	full := generate(t, e, req)
	if len(full.res.Text) < 20 {
		t.Fatalf("output too short to test: %q", full.res.Text)
	}
	stop := full.res.Text[10:14]
	req.Sampling.Stop = []string{"\x00never", stop}
	got := generate(t, e, req)
	want := full.res.Text[:strings.Index(full.res.Text, stop)]
	if got.res.Text != want || got.res.FinishReason != inference.FinishStop {
		t.Fatalf("stop %q: got %q (%s), want %q", stop, got.res.Text, got.res.FinishReason, want)
	}
	switch {
	case full.res.FinishReason == inference.FinishLength && len(full.res.Tokens) == 60:
	case full.res.FinishReason == inference.FinishStop && full.res.StopToken >= 0 && len(full.res.Tokens) < 60:
	default:
		t.Fatalf("max_tokens 60: %d tokens, %s, stop token %d", len(full.res.Tokens), full.res.FinishReason, full.res.StopToken)
	}
}

func TestGreedyFollowsArgmax(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{})
	got := generate(t, e, inference.GenerateRequest{Messages: chat("Hi"), Sampling: inference.Sampling{MaxTokens: 20}})
	scored, err := e.Score(context.Background(), got.res.Prompt, got.res.Tokens, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range got.res.Tokens {
		if scored[i][0].ID != id {
			t.Fatalf("step %d: greedy picked %d, argmax is %d", i, id, scored[i][0].ID)
		}
	}
}

func TestQuantisedWeightsTrackF32(t *testing.T) {
	o := tinyOptions()
	f32 := open(t, o, llm.Options{})
	out := generate(t, f32, inference.GenerateRequest{Messages: chat("Tell me a story"), Sampling: inference.Sampling{MaxTokens: 32}})
	want, _ := f32.Score(context.Background(), out.res.Prompt, out.res.Tokens, 1)
	for _, c := range []struct {
		q      gguf.Type
		maxErr float64
	}{{gguf.TypeF16, 0.01}, {gguf.TypeQ8_0, 0.3}} {
		e := open(t, withQuant(o, c.q), llm.Options{})
		if e.Info().Quant != c.q.String() || e.Info().ID == f32.Info().ID {
			t.Fatalf("%v: info %+v", c.q, e.Info())
		}
		got, err := e.Score(context.Background(), out.res.Prompt, out.res.Tokens, 1)
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		same := 0
		for i := range got {
			worst = max(worst, math.Abs(float64(got[i][0].LogProb-want[i][0].LogProb)))
			if got[i][0].ID == want[i][0].ID {
				same++
			}
		}
		if worst > c.maxErr || same < len(got)*3/4 {
			t.Fatalf("%v: top-1 log-prob differs by up to %v, same argmax at %d/%d steps", c.q, worst, same, len(got))
		}
		if worst == 0 {
			t.Fatalf("%v: identical to F32", c.q)
		}
	}
}

func TestCatalogGuardsLoading(t *testing.T) {
	dir := model(t, tinyOptions())
	e, err := llm.Open(dir, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := e.Info().ID
	if _, root, _ := catalog.Build(dir); inference.ModelID(root) != id {
		t.Fatal("engine ID is not the catalog root")
	}
	if _, err := llm.Open(dir, llm.Options{ModelID: &id}); err != nil {
		t.Fatal(err)
	}
	wrong := id
	wrong[0] ^= 1
	if _, err := llm.Open(dir, llm.Options{ModelID: &wrong}); !errors.Is(err, catalog.ErrMismatch) {
		t.Fatalf("wrong ID: %v", err)
	}
}

func TestRequestErrors(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{MaxContext: 64})
	ctx := context.Background()
	nop := func(inference.Token) error { return nil }
	bad := []inference.GenerateRequest{
		{},
		{Prompt: "x", Sampling: inference.Sampling{Temperature: -1}},
		{Prompt: "x", Sampling: inference.Sampling{TopK: -1}},
		{Prompt: "x", Sampling: inference.Sampling{Stop: []string{""}}},
		{Prompt: "x", LogProbs: 1000},
		{Prompt: strings.Repeat("long prompt ", 40)},
		{PromptTokens: []int{1, 1 << 30}},
		{Prompt: "x", Continuation: []int{-1}},
	}
	for i, req := range bad {
		if _, err := e.Generate(ctx, req, nop); err == nil {
			t.Errorf("request %d accepted", i)
		}
	}
	got := generate(t, e, inference.GenerateRequest{Prompt: "Hello", Sampling: inference.Sampling{Temperature: 1}})
	if got.res.FinishReason != inference.FinishLength || len(got.res.Prompt)+len(got.res.Tokens) != 64 {
		t.Fatalf("context limit: %d+%d tokens, %s", len(got.res.Prompt), len(got.res.Tokens), got.res.FinishReason)
	}
	if _, err := e.Score(ctx, []int{1}, []int{2}, 0); err == nil {
		t.Error("score with k=0 accepted")
	}
	if _, err := e.Score(ctx, nil, []int{2}, 1); err == nil {
		t.Error("score without prompt accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Generate(cctx, inference.GenerateRequest{Prompt: "x"}, nop); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	stopErr := errors.New("client gone")
	if _, err := e.Generate(ctx, inference.GenerateRequest{Prompt: "x"}, func(inference.Token) error { return stopErr }); !errors.Is(err, stopErr) {
		t.Errorf("emit error: %v", err)
	}
}

// TestContinuationFromText resumes from emitted text alone where the
// tokenizer reproduces the emitted tokens from it.
func TestContinuationFromText(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{})
	tried, roundTrips := 0, 0
	for i := range 8 {
		req := inference.GenerateRequest{Prompt: "The weather today", Sampling: inference.Sampling{Temperature: 0.7, Seed: uint64(i), MaxTokens: 24}}
		full := generate(t, e, req)
		for cut := 1; cut < len(full.res.Tokens); cut++ {
			text := e.Detokenize(full.res.Tokens[:cut])
			tried++
			if ids, _ := e.Tokenize(text); !reflect.DeepEqual(ids, full.res.Tokens[:cut]) {
				continue
			}
			roundTrips++
			resumed := req
			resumed.ContinuationText = text
			rest := generate(t, e, resumed)
			if !reflect.DeepEqual(rest.res.Tokens, full.res.Tokens[cut:]) {
				t.Fatalf("seed %d cut %d: resumed from text %v, uncut %v", i, cut, rest.res.Tokens, full.res.Tokens[cut:])
			}
		}
	}
	if roundTrips == 0 {
		t.Fatalf("no cut of %d round-tripped through text", tried)
	}
	t.Logf("%d of %d cuts round-trip through text", roundTrips, tried)
}

func TestConcurrentGenerations(t *testing.T) {
	e := open(t, moeOptions(), llm.Options{Threads: 2})
	reqs := make([]inference.GenerateRequest, 4)
	want := make([]run, len(reqs))
	for i := range reqs {
		reqs[i] = inference.GenerateRequest{Messages: chat(fmt.Sprintf("Question number %d", i)), Sampling: inference.Sampling{Temperature: 1, Seed: uint64(i), MaxTokens: 20}, LogProbs: 2}
		want[i] = generate(t, e, reqs[i])
	}
	got := make([]run, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i].res, errs[i] = e.Generate(context.Background(), reqs[i], func(tok inference.Token) error {
				got[i].tokens = append(got[i].tokens, tok)
				return nil
			})
		}()
	}
	wg.Wait()
	for i := range reqs {
		if errs[i] != nil || !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("request %d differs when run concurrently (%v)", i, errs[i])
		}
	}
}

// A sampled token outside the top-k still carries its own log-prob.
func TestSampledTokenLogProbOutsideTopK(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{})
	r := generate(t, e, inference.GenerateRequest{Prompt: "Once upon a time", LogProbs: 1,
		Sampling: inference.Sampling{Temperature: 1.5, Seed: 7, MaxTokens: 40}})
	outside := 0
	for _, tok := range r.tokens {
		if tok.ID != tok.TopK[0].ID {
			outside++
			if tok.LogProb == 0 || tok.LogProb >= tok.TopK[0].LogProb {
				t.Fatalf("token %d outside the top-1 has log-prob %v (top-1 %v)", tok.ID, tok.LogProb, tok.TopK[0].LogProb)
			}
		}
	}
	if outside == 0 {
		t.Fatalf("no token of %d sampled outside the top-1 at temperature 1.5; the test proves nothing", len(r.tokens))
	}
}

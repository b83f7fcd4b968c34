package validator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// detectionPrompts ask for ASCII, CJK, emoji, accented and byte-noise
// output. On random weights every answer is a random token sequence
// whatever it asks, so most spell invalid UTF-8 or split a multi-byte
// character across tokens; the test asserts per case which did.
var detectionPrompts = []string{
	"Tell me about verification in plain ASCII.",
	"用中文回答：什么是验证？请详细说明。",
	"Emoji only please 🙂🚀👩‍💻🎉",
	"Café, naïve, jalapeño, Ærøskøbing, Øresund, façade",
	"\x01\x02\x1b[0m\x7f\u00ff\u0100 random bytes \ufffd",
}

// detectionKinds are the cheats of the experiment, in table order.
var detectionKinds = []string{"other weights", "Q8_0 for F32", "changed prompt", "truncated (forced stop)", "extended", "other seed"}

// detectionModels are the weights a detection run serves and judges.
type detectionModels struct {
	real, q8, other *llm.Engine
	judge           *llm.Engine // the committee's copy: other threads and batch shape
}

func openDetectionModels(t testing.TB, dir string, o modelgen.GenOptions) detectionModels {
	t.Helper()
	var m detectionModels
	m.real = openGenerated(t, filepath.Join(dir, "real"), o)
	q8, other := o, o
	q8.Quant, other.Seed = gguf.TypeQ8_0, o.Seed+1
	m.q8 = openGenerated(t, filepath.Join(dir, "q8"), q8)
	m.other = openGenerated(t, filepath.Join(dir, "other"), other)
	judge, err := llm.Open(filepath.Join(dir, "real"), llm.Options{Threads: 2, PrefillChunk: 7})
	if err != nil {
		t.Fatal(err)
	}
	m.judge = judge
	return m
}

// detectionInput is prompt p's request, with a sampled decoding for
// every prompt (a seed cheat changes nothing at temperature 0) but the
// first, and answers of two chunks or more.
func detectionInput(p int, maxTokens int) DisputeInput {
	return DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: detectionPrompts[p%len(detectionPrompts)]}},
		Sampling: terms.Sampling{Temperature: []float64{0, 0.8, 1.2}[p%3], TopP: 0.95, Seed: uint64(70 + p), MaxTokens: maxTokens}}
}

// cheat serves in as a provider of the given kind would, claiming the
// real weights' model: the answer it signs.
func (m detectionModels) cheat(t testing.TB, kind string, in DisputeInput, honest answer) answer {
	t.Helper()
	switch kind {
	case "other weights":
		return generate(t, m.other, in)
	case "Q8_0 for F32":
		return generate(t, m.q8, in)
	case "changed prompt":
		other := in
		other.Messages = []terms.Message{{Role: "user", Content: "Something else: " + in.Messages[0].Content}}
		a := generate(t, m.real, other)
		a.in = in // signed as the buyer's request
		return a
	case "truncated (forced stop)":
		// Half the answer, then an end of turn the sampler did not draw:
		// half the compute, billed as a natural end. Its proofs are the
		// real weights' log-probs along the signed tokens.
		return m.recommitted(t, in, append(honest.tokens[:len(honest.tokens)/2:len(honest.tokens)/2], 2))
	case "extended":
		// Six tokens the model did not sample appended, to bill more.
		extra, err := m.real.Tokenize(" pay me more")
		if err != nil {
			t.Fatal(err)
		}
		tokens := append([]uint32(nil), honest.tokens...)
		for _, id := range extra {
			tokens = append(tokens, uint32(id))
		}
		return m.recommitted(t, in, tokens)
	case "other seed":
		other := in
		other.Sampling.Seed++
		a := generate(t, m.real, other)
		a.in = in
		return a
	}
	t.Fatalf("unknown cheat %q", kind)
	return answer{}
}

// recommitted is an answer of exactly these tokens whose proofs are the
// real weights' top-k log-probs along them: a cheat that commits honestly
// to tokens it did not sample as signed.
func (m detectionModels) recommitted(t testing.TB, in DisputeInput, tokens []uint32) answer {
	t.Helper()
	prompt, err := m.real.EncodePrompt(inferenceRequest(in))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(tokens))
	for i, id := range tokens {
		ids[i] = int(id)
	}
	steps, err := m.real.Score(context.Background(), prompt, ids, commit.TopK)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := commit.Build(steps, m.real.Info().VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	return answer{in: in, text: inference.ValidText(m.real.Detokenize(ids)), raw: m.real.Detokenize(ids), tokens: tokens, proofs: proofs}
}

// firstFailing is FirstFailingChunk, failing the test on an error.
func firstFailing(t testing.TB, eng inference.Engine, ev ledger.DisputeEvidence) int {
	t.Helper()
	c, _, err := FirstFailingChunk(context.Background(), eng, ev)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// detectionRow is one line of the table.
type detectionRow struct{ runs, convicted, invalid, split int }

// runDetection judges, for each prompt, the honest answer (named at its
// last chunk: the costliest to judge) and every cheat (named at its first
// failing chunk) on the committee's copy of the weights, and returns the
// table by kind ("honest" first).
func runDetection(t testing.TB, m detectionModels, prompts []int, maxTokens int) map[string]*detectionRow {
	t.Helper()
	mach, err := ledgertest.NewMachine(filepath.Join(t.TempDir(), "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mach.Close() }()
	model := m.real.Info().ID
	rows := map[string]*detectionRow{}
	tally := func(kind string, a answer, v ledger.Verdict) {
		keys := []string{kind, "all answers"}
		if kind != "honest" {
			keys = append(keys, "all cheats")
		}
		for _, k := range keys {
			r := rows[k]
			if r == nil {
				r = &detectionRow{}
				rows[k] = r
			}
			r.runs++
			if v == ledger.VerdictGuilty {
				r.convicted++
			}
			if a.invalid() {
				r.invalid++
			}
			if a.split {
				r.split++
			}
		}
	}
	for _, p := range prompts {
		in := detectionInput(p, maxTokens)
		honest := generate(t, m.real, in)
		ev := signAnswer(t, mach, model, make([]byte, 16), honest)
		ev.Chunk = uint32(len(honest.proofs) - 1)
		v, why, err := judge(context.Background(), m.judge, ev, commit.DefaultTolerance)
		if err != nil || v != ledger.VerdictInnocent {
			t.Errorf("prompt %d honest (%d tokens, invalid %v, split %v): %s (%s) %v", p, len(honest.tokens), honest.invalid(), honest.split, v, why, err)
		}
		tally("honest", honest, v)
		for _, kind := range detectionKinds {
			if kind == "other seed" && in.Sampling.Temperature == 0 {
				continue // greedy decoding has no seed to change
			}
			lie := m.cheat(t, kind, in, honest)
			if slices.Equal(lie.tokens, honest.tokens) && kind != "Q8_0 for F32" {
				t.Fatalf("prompt %d %s: the cheat served the honest tokens (not a cheat)", p, kind)
			}
			ev := signAnswer(t, mach, model, make([]byte, 16), lie)
			c := firstFailing(t, m.real, ev)
			v, why := ledger.VerdictInnocent, "no chunk fails for the disputer"
			if c >= 0 {
				ev.Chunk = uint32(c)
				if v, why, err = judge(context.Background(), m.judge, ev, commit.DefaultTolerance); err != nil {
					t.Fatal(err)
				}
			}
			if v != ledger.VerdictGuilty {
				t.Errorf("prompt %d %s (%d tokens, invalid %v, split %v): %s (%s)", p, kind, len(lie.tokens), lie.invalid(), lie.split, v, why)
			}
			tally(kind, lie, v)
		}
	}
	return rows
}

// detectionTable formats rows as the experiment's table.
func detectionTable(name string, rows map[string]*detectionRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-26s %5s %10s %10s %14s %8s\n", name, "answer", "runs", "convicted", "acquitted", "invalid UTF-8", "split")
	for _, kind := range append(append([]string{"honest"}, detectionKinds...), "all cheats", "all answers") {
		r := rows[kind]
		if r == nil {
			r = &detectionRow{}
		}
		fmt.Fprintf(&b, "%-26s %5d %10d %10d %14d %8d\n", kind, r.runs, r.convicted, r.runs-r.convicted, r.invalid, r.split)
	}
	return b.String()
}

// detectionSplit is which prompts each model answers in make test (each
// prompt's cheats cost six generations under the race detector):
// between them every kind of prompt, greedy and sampled; TENZRO_DETECTION
// (scripts/bench-disputes) asks for every prompt on both, repeated.
func detectionSplit() (dense, moe []int, maxTokens int) {
	if n, err := strconv.Atoi(os.Getenv("TENZRO_DETECTION")); err == nil && n > 0 {
		for p := range n * len(detectionPrompts) {
			dense, moe = append(dense, p), append(moe, p)
		}
		return dense, moe, 72
	}
	return []int{0, 1, 2}, []int{3, 4}, 36
}

// TestDisputeDetection: on the dense and the MoE devnet models, judged as
// a committee member judges (judge, on another thread count and prefill
// batch than the provider's), every honest answer is acquitted even when
// the dispute names its last chunk, and every cheat of every kind is
// convicted on the first chunk its disputer finds failing. Each case is
// asserted; the answers include invalid UTF-8 and characters split across
// tokens (counted per model, asserted over both). scripts/bench-disputes runs it over more
// prompts and longer answers.
func TestDisputeDetection(t *testing.T) {
	dense, moe, maxTokens := detectionSplit()
	var invalid, split, answers int
	for _, run := range []struct {
		name    string
		moe     bool
		prompts []int
	}{{"dense", false, dense}, {"moe", true, moe}} {
		t.Run(run.name, func(t *testing.T) {
			o := modelgen.DevnetOptions()
			o.MoE = run.moe
			m := openDetectionModels(t, t.TempDir(), o)
			rows := runDetection(t, m, run.prompts, maxTokens)
			table := detectionTable(fmt.Sprintf("%s devnet model, %d prompts, up to %d tokens", run.name, len(run.prompts), maxTokens), rows)
			if os.Getenv("TENZRO_DETECTION") != "" {
				fmt.Print(table) // for scripts/bench-disputes
			} else {
				t.Log("\n" + table)
			}
			for _, kind := range append([]string{"honest"}, detectionKinds...) {
				r := rows[kind]
				switch {
				case r == nil || r.runs == 0:
					t.Errorf("%s: no runs", kind)
				case kind == "honest" && r.convicted != 0:
					t.Errorf("%s: %d of %d convicted", kind, r.convicted, r.runs)
				case kind != "honest" && r.convicted != r.runs:
					t.Errorf("%s: %d of %d convicted", kind, r.convicted, r.runs)
				}
			}
			all := rows["all answers"]
			invalid, split, answers = invalid+all.invalid, split+all.split, answers+all.runs
		})
	}
	if invalid == 0 || split == 0 {
		t.Errorf("the answers do not cover the byte shapes: %d of %d invalid UTF-8, %d split", invalid, answers, split)
	}
}

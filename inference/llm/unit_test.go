package llm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
)

func TestDetMathMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		x := (rng.Float64()*2 - 1) * 80
		if got, want := expDet(x), math.Exp(x); math.Abs(got-want) > 5e-16*want {
			t.Fatalf("exp(%v) = %v, want %v", x, got, want)
		}
		y := math.Exp(x / 4)
		if got, want := logDet(y), math.Log(y); math.Abs(got-want) > 1e-15*max(1, math.Abs(want)) {
			t.Fatalf("log(%v) = %v, want %v", y, got, want)
		}
		z := rng.Float64() * 1e5
		s, c := sincosDet(z)
		if math.Abs(s-math.Sin(z)) > 1e-12 || math.Abs(c-math.Cos(z)) > 1e-12 {
			t.Fatalf("sincos(%v) = %v %v, want %v %v", z, s, c, math.Sin(z), math.Cos(z))
		}
	}
	if expDet(-1000) != 0 || !math.IsInf(expDet(1000), 1) || !math.IsInf(logDet(0), -1) {
		t.Fatal("special cases")
	}
}

func TestDot(t *testing.T) {
	for n := 0; n < 40; n++ {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = float32(i)+0.5, float32(n-i)
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-4*math.Max(1, want) {
			t.Fatalf("n=%d dot = %v, want %v", n, got, want)
		}
	}
}

func TestParallelForCoversEachItemOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		for _, n := range []int{0, 1, 7, 100, 1001} {
			seen := make([]int32, n)
			parallelFor(threads, n, 3, func(w, lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("threads %d n %d: item %d seen %d times", threads, n, i, s)
				}
			}
		}
	}
}

func TestTopLogProbs(t *testing.T) {
	logits := []float32{1, 3, 3, -2, 0.5}
	top := TopLogProbs(logits, 3)
	if len(top) != 3 || top[0].ID != 1 || top[1].ID != 2 || top[2].ID != 0 {
		t.Fatalf("order %+v", top)
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v))
	}
	if want := 3 - math.Log(sum); math.Abs(float64(top[0].LogProb)-want) > 1e-6 {
		t.Fatalf("logprob %v, want %v", top[0].LogProb, want)
	}
	if len(TopLogProbs(logits, 10)) != 5 || TopLogProbs(logits, 0) != nil {
		t.Fatal("k bounds")
	}
}

func TestSample(t *testing.T) {
	logits := []float32{0, 5, 1, 4.9, -3}
	if got := Sample(logits, inference.Sampling{}, 7); got != 1 {
		t.Fatalf("greedy = %d", got)
	}
	counts := map[int]int{}
	for pos := 0; pos < 4000; pos++ {
		sp := inference.Sampling{Temperature: 1, Seed: 9}
		id := Sample(logits, sp, pos)
		if id != Sample(logits, sp, pos) {
			t.Fatal("same (seed, pos) gave different tokens")
		}
		counts[id]++
		if k := Sample(logits, inference.Sampling{Temperature: 1, TopK: 2, Seed: 9}, pos); k != 1 && k != 3 {
			t.Fatalf("top_k 2 sampled %d", k)
		}
		if p := Sample(logits, inference.Sampling{Temperature: 1, TopP: 0.5, Seed: 9}, pos); p != 1 {
			t.Fatalf("top_p 0.5 sampled %d", p)
		}
	}
	// p(1) = e^5/(e^0+e^5+e^1+e^4.9+e^-3) ≈ 0.51
	if f := float64(counts[1]) / 4000; f < 0.47 || f > 0.55 {
		t.Fatalf("token 1 sampled with frequency %v", f)
	}
	if counts[4] > 10 {
		t.Fatalf("unlikely token sampled %d times", counts[4])
	}
	other := 0
	for pos := 0; pos < 200; pos++ {
		if Sample(logits, inference.Sampling{Temperature: 1, Seed: 9}, pos) != Sample(logits, inference.Sampling{Temperature: 1, Seed: 10}, pos) {
			other++
		}
	}
	if other == 0 {
		t.Fatal("seed does not change the draws")
	}
}

func TestTextStream(t *testing.T) {
	ts := newTextStream([]string{"STOP", "\n\n"})
	var out strings.Builder
	for _, p := range []string{"Hel", "lo S", "TO", "ne", "xt ST", "OP here"} {
		s, stopped := ts.push([]byte(p))
		out.WriteString(s)
		if stopped {
			break
		}
	}
	if out.String() != "Hello STOnext " {
		t.Fatalf("released %q", out.String())
	}
	ts = newTextStream(nil)
	euro := []byte("€") // 3 bytes
	if s, _ := ts.push(euro[:1]); s != "" {
		t.Fatalf("released a partial rune %q", s)
	}
	if s, _ := ts.push(euro[1:2]); s != "" {
		t.Fatalf("released a partial rune %q", s)
	}
	if s, _ := ts.push(append(euro[2:], 'x')); s != "€x" {
		t.Fatalf("released %q", s)
	}
	if s, _ := ts.push([]byte{0xff}); s != "\xff" {
		t.Fatalf("invalid byte held back: %q", s)
	}
}

func TestPreTokenize(t *testing.T) {
	cases := map[string][]string{
		"Hello world":     {"Hello", " world"},
		"I'm here's":      {"I", "'m", " here", "'s"},
		"a  b":            {"a", " ", " b"},
		"x\n\ny":          {"x", "\n", "\n", "y"},
		"end   ":          {"end", "   "},
		"price: $42.50!":  {"price", ":", " $", "42", ".", "50", "!"},
		"héllo wörld 日本語": {"héllo", " wörld", " 日本語"},
		" \tx":            {" ", "\t", "x"},
		"\xff\xfeab":      {"\uFFFD\uFFFD", "ab"}, // llama.cpp: each invalid byte is U+FFFD
	}
	for in, want := range cases {
		got := PreTokenize(in)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("PreTokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeSymbols(t *testing.T) {
	ranks := map[string]float64{"a b": 0, "ab c": 1, "b c": 2}
	text := "abcbc"
	out := mergeSymbols(text, []int{0, 1, 2, 3, 4, 5}, func(l, r string) (float64, bool) {
		v, ok := ranks[l+" "+r]
		return v, ok
	})
	var got []string
	for _, s := range out {
		got = append(got, text[s[0]:s[1]])
	}
	if strings.Join(got, "|") != "abc|bc" {
		t.Fatalf("merged %q", got)
	}
}

// TestScale2MatchesLdexp: expDet's fast power-of-two scaling is exact.
func TestScale2MatchesLdexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for k := -1100; k <= 1100; k++ {
		for range 20 {
			y := 0.5 + rng.Float64()
			if got, want := scale2(y, k), math.Ldexp(y, k); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("scale2(%v, %d) = %v, Ldexp %v", y, k, got, want)
			}
		}
	}
}

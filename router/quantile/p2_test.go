package quantile

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type dist struct {
	name string
	draw func(r *rand.Rand) float64
}

var (
	lognormal = dist{"lognormal(0,1)", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }}
	pareto15  = dist{"pareto(1,1.5)", func(r *rand.Rand) float64 { return math.Pow(1-r.Float64(), -1/1.5) }}
	pareto11  = dist{"pareto(1,1.1)", func(r *rand.Rand) float64 { return math.Pow(1-r.Float64(), -1/1.1) }}
)

// worstError feeds seeds streams of n draws to a fresh estimator each and
// returns the largest and mean relative error of its p-quantile against the
// exact type-7 quantile of the same stream. logSpace feeds log(x) and
// exponentiates the answer, as Tracker does.
func worstError(t *testing.T, d dist, p float64, n, seeds int, logSpace bool) (worst, mean float64) {
	t.Helper()
	xs := make([]float64, n)
	for seed := 1; seed <= seeds; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		e, err := NewWithWarmup(p, DefaultWarmup)
		if err != nil {
			t.Fatal(err)
		}
		for i := range xs {
			xs[i] = d.draw(r)
			if logSpace {
				e.Add(math.Log(xs[i]))
			} else {
				e.Add(xs[i])
			}
		}
		got := e.Quantile()
		if logSpace {
			got = math.Exp(got)
		}
		slices.Sort(xs)
		want := exact(xs, p)
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
		mean += rel / float64(seeds)
	}
	return worst, mean
}

// TestAccuracyAgainstExact checks the p95 (and p50, p99 on lognormal)
// against the exact quantile of the same seeded stream. Bounds are the
// worst error measured over 10 seeds (amd64), rounded up by about half, so
// a regression in the marker logic fails while float differences between
// platforms do not.
func TestAccuracyAgainstExact(t *testing.T) {
	cases := []struct {
		d        dist
		p        float64
		n        int
		logSpace bool
		bound    float64
	}{
		{lognormal, 0.95, 1_000, false, 0.10},
		{lognormal, 0.95, 10_000, false, 0.025},
		{lognormal, 0.95, 100_000, false, 0.005},
		{lognormal, 0.95, 1_000, true, 0.08},
		{lognormal, 0.95, 10_000, true, 0.016},
		{lognormal, 0.95, 100_000, true, 0.004},
		{lognormal, 0.50, 100_000, false, 0.0025},
		{lognormal, 0.99, 100_000, false, 0.011},
		{pareto15, 0.95, 1_000, false, 0.15},
		{pareto15, 0.95, 10_000, false, 0.05},
		{pareto15, 0.95, 100_000, false, 0.04},
		{pareto15, 0.95, 1_000, true, 0.10},
		{pareto15, 0.95, 10_000, true, 0.043},
		{pareto15, 0.95, 100_000, true, 0.01},
		{pareto11, 0.95, 100_000, false, 0.20},
		{pareto11, 0.95, 100_000, true, 0.013},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/p%.2f/n%d/log=%v", c.d.name, c.p, c.n, c.logSpace)
		t.Run(name, func(t *testing.T) {
			if testing.Short() && c.n > 10_000 {
				t.Skip("long stream")
			}
			worst, mean := worstError(t, c.d, c.p, c.n, 10, c.logSpace)
			t.Logf("relative error over 10 seeds: mean %.4f worst %.4f (bound %.3f)", mean, worst, c.bound)
			if worst > c.bound {
				t.Fatalf("worst relative error %.4f > %.3f", worst, c.bound)
			}
		})
	}
}

func TestSmallSamplesAreExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range []float64{0.05, 0.5, 0.95} {
		e, _ := NewWithWarmup(p, DefaultWarmup)
		if !math.IsNaN(e.Quantile()) {
			t.Fatalf("empty estimator: %v, want NaN", e.Quantile())
		}
		var seen []float64
		for i := 1; i <= DefaultWarmup; i++ {
			x := r.ExpFloat64()
			e.Add(x)
			seen = append(seen, x)
			sorted := slices.Sorted(slices.Values(seen))
			if got, want := e.Quantile(), exact(sorted, p); got != want {
				t.Fatalf("p=%v n=%d: %v, want exact %v", p, i, got, want)
			}
		}
	}
	e, _ := NewWithWarmup(0.95, DefaultWarmup)
	e.Add(7)
	if e.Quantile() != 7 || e.Count() != 1 {
		t.Fatalf("one sample: %v (n=%d)", e.Quantile(), e.Count())
	}
	e.Add(9)
	if got := e.Quantile(); math.Abs(got-8.9) > 1e-12 {
		t.Fatalf("two samples: %v, want 8.9", got)
	}
}

func TestClassicInitialisation(t *testing.T) {
	e, err := NewWithWarmup(0.95, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{5, 1, 4, 2, 3, 6} {
		e.Add(x)
	}
	// The paper's markers 1..5 at ranks 1..5, then one step for x=6: the
	// maximum becomes 6 at rank 6; marker 3 (desired rank 5.875) moves up
	// one to the parabolic height 4 + (2·2/2 + 1·1/1)/3 = 5; marker 2 was
	// checked first, while marker 3 still blocked it.
	if e.q != [5]float64{1, 2, 3, 5, 6} || e.pos != [5]float64{1, 2, 3, 5, 6} {
		t.Fatalf("markers %v at %v, want the paper's 1..5 then the step for 6", e.q, e.pos)
	}
}

func TestWarmupInitialisationPlacesMarkers(t *testing.T) {
	e, _ := NewWithWarmup(0.95, DefaultWarmup)
	for i := DefaultWarmup; i >= 1; i-- {
		e.Add(float64(i))
	}
	if e.buf == nil {
		t.Fatal("markers placed before the warm-up sample is complete")
	}
	e.initMarkers()
	// Desired positions 1, 10.03, 19.05, 19.53, 20 → ranks 1, 10, 18, 19, 20
	// after keeping them strictly increasing.
	if want := [5]float64{1, 10, 18, 19, 20}; e.pos != want || e.q != want {
		t.Fatalf("markers %v at %v, want %v", e.q, e.pos, want)
	}
}

func TestMarkersStayOrdered(t *testing.T) {
	for _, d := range []dist{lognormal, pareto11} {
		r := rand.New(rand.NewPCG(11, 12))
		e, _ := NewWithWarmup(0.95, DefaultWarmup)
		for i := 0; i < 50_000; i++ {
			e.Add(d.draw(r))
			if e.buf != nil {
				continue
			}
			for j := 1; j < 5; j++ {
				if e.q[j] < e.q[j-1] || e.pos[j] <= e.pos[j-1] {
					t.Fatalf("%s after %d: heights %v positions %v", d.name, e.n, e.q, e.pos)
				}
			}
			if e.pos[4] != float64(e.n) {
				t.Fatalf("max marker at %v, want %d", e.pos[4], e.n)
			}
		}
	}
}

func TestMonotoneInputs(t *testing.T) {
	const n = 10_000
	up, _ := NewWithWarmup(0.95, DefaultWarmup)
	down, _ := NewWithWarmup(0.95, DefaultWarmup)
	xs := make([]float64, n)
	for i := 0; i < n; i++ {
		xs[i] = float64(i)
		up.Add(float64(i))
		down.Add(float64(n - 1 - i))
	}
	want := exact(xs, 0.95)
	for name, e := range map[string]*Estimator{"increasing": up, "decreasing": down} {
		if rel := math.Abs(e.Quantile()-want) / want; rel > 0.01 {
			t.Errorf("%s: %v, want %v (rel %.4f)", name, e.Quantile(), want, rel)
		}
	}
}

func TestConstantAndDuplicateInputs(t *testing.T) {
	c, _ := NewWithWarmup(0.95, DefaultWarmup)
	for i := 0; i < 5000; i++ {
		c.Add(42)
	}
	if c.Quantile() != 42 {
		t.Fatalf("constant stream: %v", c.Quantile())
	}
	// Three values, P(3) = 0.1: the exact p95 is 3.
	r := rand.New(rand.NewPCG(5, 6))
	d, _ := NewWithWarmup(0.95, DefaultWarmup)
	for i := 0; i < 20_000; i++ {
		x := 1.0
		switch u := r.Float64(); {
		case u < 0.1:
			x = 3
		case u < 0.5:
			x = 2
		}
		d.Add(x)
	}
	if got := d.Quantile(); got < 2.5 || got > 3 {
		t.Fatalf("duplicates: p95 %v, want near 3 and within [1, 3]", got)
	}
}

func TestNonFiniteIgnored(t *testing.T) {
	e, _ := NewWithWarmup(0.5, DefaultWarmup)
	for _, x := range []float64{1, math.NaN(), 2, math.Inf(1), 3, math.Inf(-1)} {
		e.Add(x)
	}
	if e.Count() != 3 || e.Quantile() != 2 {
		t.Fatalf("count %d quantile %v, want 3 and 2", e.Count(), e.Quantile())
	}
	e.Reset()
	if e.Count() != 0 || !math.IsNaN(e.Quantile()) {
		t.Fatal("reset kept state")
	}
}

func TestInvalidArguments(t *testing.T) {
	for _, p := range []float64{0, 1, -0.1, 1.5, math.NaN()} {
		if _, err := NewWithWarmup(p, DefaultWarmup); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%v): %v, want ErrInvalid", p, err)
		}
	}
	for _, w := range []int{0, 4, 1 << 20} {
		if _, err := NewWithWarmup(0.5, w); !errors.Is(err, ErrInvalid) {
			t.Errorf("warm-up %d: %v, want ErrInvalid", w, err)
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = math.Exp(r.NormFloat64())
	}
	e, _ := NewWithWarmup(0.95, DefaultWarmup)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Add(xs[i&(len(xs)-1)])
	}
}

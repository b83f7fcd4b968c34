package quantile

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func lognormalMs(r *rand.Rand, medianMs, sigma float64) time.Duration {
	return time.Duration(medianMs * math.Exp(sigma*r.NormFloat64()) * float64(time.Millisecond))
}

func TestTrackerP95AndMean(t *testing.T) {
	tr, err := NewTracker(Config{Window: -1})
	if err != nil {
		t.Fatal(err)
	}
	if s := tr.Snapshot(); s.Known() || s.P95 != 0 || s.Mean != 0 {
		t.Fatalf("empty tracker: %+v", s)
	}
	r := rand.New(rand.NewPCG(21, 22))
	var ds []float64
	for i := 0; i < 20_000; i++ {
		d := lognormalMs(r, 50, 0.5)
		tr.Observe(d)
		ds = append(ds, float64(d))
	}
	slices.Sort(ds)
	want := exact(ds, Quantile)
	s := tr.Snapshot()
	if rel := math.Abs(float64(s.P95)-want) / want; rel > 0.02 {
		t.Fatalf("p95 %v, exact %v (rel %.4f)", s.P95, time.Duration(want), rel)
	}
	if s.Count != 20_000 || !s.Known() {
		t.Fatalf("count %d", s.Count)
	}
	// Median 50 ms, σ 0.5: mean 50·e^{0.125} ≈ 56.7 ms; the EWMA of the
	// last ~10 samples scatters around it.
	if s.Mean < 30*time.Millisecond || s.Mean > 100*time.Millisecond {
		t.Fatalf("recent mean %v", s.Mean)
	}
}

func TestTrackerMeanIsRecent(t *testing.T) {
	tr, _ := NewTracker(Config{Alpha: 0.5})
	tr.Observe(100 * time.Millisecond)
	if m := tr.Snapshot().Mean; m != 100*time.Millisecond {
		t.Fatalf("first sample sets the mean: %v", m)
	}
	tr.Observe(200 * time.Millisecond)
	if m := tr.Snapshot().Mean; m != 150*time.Millisecond {
		t.Fatalf("mean %v, want 150ms", m)
	}
	for i := 0; i < 40; i++ {
		tr.Observe(10 * time.Millisecond)
	}
	if m := tr.Snapshot().Mean; m > 11*time.Millisecond {
		t.Fatalf("mean %v did not follow the recent samples", m)
	}
	tr.Observe(-time.Second)
	if s := tr.Snapshot(); s.Count != 42 {
		t.Fatalf("negative duration counted: %d", s.Count)
	}
}

func TestTrackerWindowFollowsAShift(t *testing.T) {
	tr, _ := NewTracker(Config{Window: 400})
	for i := 0; i < 2000; i++ {
		tr.Observe(time.Duration(10+i%10) * time.Millisecond)
	}
	if p := tr.Snapshot().P95; p < 18*time.Millisecond || p > 20*time.Millisecond {
		t.Fatalf("p95 before the shift %v", p)
	}
	for i := 0; i < 100; i++ { // a quarter window: not yet enough
		tr.Observe(time.Duration(100+i%10) * time.Millisecond)
	}
	for i := 0; i < 400; i++ {
		tr.Observe(time.Duration(100+i%10) * time.Millisecond)
	}
	if p := tr.Snapshot().P95; p < 105*time.Millisecond || p > 110*time.Millisecond {
		t.Fatalf("p95 after the shift %v, want ~109ms", p)
	}
}

func TestTrackerCensoredSamples(t *testing.T) {
	tr, _ := NewTracker(Config{})
	if tr.ObserveCensored(time.Second) {
		t.Fatal("censored sample recorded with no estimate to compare against")
	}
	for i := 1; i <= 100; i++ {
		tr.Observe(time.Duration(i) * time.Millisecond)
	}
	p95 := tr.Snapshot().P95
	if tr.ObserveCensored(p95 / 2) {
		t.Fatal("a censored sample below the p95 was recorded")
	}
	if !tr.ObserveCensored(2 * p95) {
		t.Fatal("a censored sample above the p95 was dropped")
	}
	if s := tr.Snapshot(); s.Count != 101 {
		t.Fatalf("count %d, want 101", s.Count)
	}
}

// TestCensoringKeepsP95Unbiased simulates hedging's effect on a provider's
// samples: requests slower than the current p95 are cancelled at a random
// point after it. Recording them as censored keeps the p95 estimate near
// the truth; dropping them pulls it down.
func TestCensoringKeepsP95Unbiased(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	with, _ := NewTracker(Config{Window: -1})
	without, _ := NewTracker(Config{Window: -1})
	var all []float64
	for i := 0; i < 50_000; i++ {
		d := lognormalMs(r, 40, 0.6)
		all = append(all, float64(d))
		for _, tr := range []*Tracker{with, without} {
			p := tr.Snapshot().P95
			if tr.Snapshot().Count < 100 || d <= p {
				tr.Observe(d)
				continue
			}
			cut := p + time.Duration(r.Float64()*float64(d-p)) // cancelled before it finished
			if tr == with {
				tr.ObserveCensored(cut)
			}
		}
	}
	slices.Sort(all)
	truth := exact(all, Quantile)
	relWith := math.Abs(float64(with.Snapshot().P95)-truth) / truth
	relWithout := math.Abs(float64(without.Snapshot().P95)-truth) / truth
	t.Logf("p95 truth %v: censored-recorded %v (rel %.3f), dropped %v (rel %.3f)",
		time.Duration(truth), with.Snapshot().P95, relWith, without.Snapshot().P95, relWithout)
	if relWith > 0.03 || relWithout < 3*relWith {
		t.Fatalf("censoring did not help: with %.3f without %.3f", relWith, relWithout)
	}
}

func TestTrackerConfigErrors(t *testing.T) {
	for _, c := range []Config{{Alpha: 1.5}, {Alpha: -1}, {Window: 10}} {
		if _, err := NewTracker(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
		if _, err := NewSet[string](c); !errors.Is(err, ErrInvalid) {
			t.Errorf("set %+v: %v, want ErrInvalid", c, err)
		}
	}
}

func TestSetConcurrent(t *testing.T) {
	s, err := NewSet[string](Config{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			key := []string{"a", "b"}[g%2]
			for i := 0; i < 1000; i++ {
				s.Observe(key, time.Duration(i)*time.Microsecond)
				_ = s.Snapshot(key)
				s.ObserveCensored(key, time.Second)
			}
		}(g)
	}
	wg.Wait()
	a, b := s.Snapshot("a"), s.Snapshot("b")
	if a.Count < 4000 || b.Count < 4000 {
		t.Fatalf("counts %d %d", a.Count, b.Count)
	}
	if s.Snapshot("nobody").Known() {
		t.Fatal("unknown key has a snapshot")
	}
	s.Forget("a")
	if s.Snapshot("a").Known() {
		t.Fatal("forgotten key kept its tracker")
	}
}

func BenchmarkTrackerObserve(b *testing.B) {
	tr, _ := NewTracker(Config{})
	r := rand.New(rand.NewPCG(1, 2))
	ds := make([]time.Duration, 1<<12)
	for i := range ds {
		ds[i] = lognormalMs(r, 50, 0.5)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Observe(ds[i&(len(ds)-1)])
	}
}

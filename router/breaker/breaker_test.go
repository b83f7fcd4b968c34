package breaker

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
)

var t0 = time.Unix(1_800_000_000, 0)

type fixedRand struct{ v float64 }

func (f *fixedRand) Float64() float64 { return f.v }

func newBreaker(t *testing.T, cfg Config) (*Breaker, *clock.Mock, *fixedRand) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(t0)
	r := &fixedRand{v: 0.5}
	b, err := New(clk, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, clk, r
}

func mustAllow(t *testing.T, b *Breaker) Ticket {
	t.Helper()
	tk, err := b.Allow()
	if err != nil {
		t.Fatalf("Allow: %v (state %s)", err, b.State())
	}
	return tk
}

func wantRefused(t *testing.T, b *Breaker, reason error) *RejectedError {
	t.Helper()
	_, err := b.Allow()
	var re *RejectedError
	if !errors.As(err, &re) || !errors.Is(err, reason) {
		t.Fatalf("Allow: %v, want %v", err, reason)
	}
	if b.Ready() {
		t.Fatal("Ready() true while Allow refuses")
	}
	return re
}

func fail(b *Breaker, tk Ticket) { b.Report(tk, Outcome{Kind: Failure}) }
func ok(b *Breaker, tk Ticket)   { b.Report(tk, Outcome{Kind: Success}) }

func TestOpensAfterConsecutiveFailures(t *testing.T) {
	b, _, _ := newBreaker(t, Config{Failures: 3})
	fail(b, mustAllow(t, b))
	fail(b, mustAllow(t, b))
	ok(b, mustAllow(t, b)) // a success resets the count
	fail(b, mustAllow(t, b))
	fail(b, mustAllow(t, b))
	if b.State() != Closed || !b.Ready() {
		t.Fatalf("state %s after 2 consecutive failures", b.State())
	}
	fail(b, mustAllow(t, b))
	if b.State() != Open {
		t.Fatalf("state %s after 3 consecutive failures", b.State())
	}
	re := wantRefused(t, b, ErrOpen)
	if want := t0.Add(DefaultCooldown); !re.RetryAt.Equal(want) {
		t.Fatalf("retry at %v, want %v", re.RetryAt, want)
	}
}

func TestNeutralAndThrottledDoNotCountAsFailures(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 2})
	fail(b, mustAllow(t, b))
	b.Report(mustAllow(t, b), Outcome{Kind: Neutral})
	b.Report(mustAllow(t, b), Outcome{Kind: Throttled})
	clk.Add(time.Minute) // past the 429 backoff
	if s := b.Snapshot(); s.State != Closed || s.ConsecutiveFailures != 1 {
		t.Fatalf("after neutral and throttled: %+v", s)
	}
}

func TestHalfOpenAdmitsOneProbe(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1, Cooldown: 2 * time.Second})
	fail(b, mustAllow(t, b))
	clk.Add(2*time.Second - time.Millisecond)
	wantRefused(t, b, ErrOpen)
	clk.Add(time.Millisecond)
	if b.State() != HalfOpen || !b.Ready() {
		t.Fatalf("state %s after the cooldown", b.State())
	}
	probe := mustAllow(t, b)
	if !probe.Probe() {
		t.Fatal("first half-open ticket is not a probe")
	}
	wantRefused(t, b, ErrProbeInFlight)
	ok(b, probe)
	if b.State() != Closed {
		t.Fatalf("state %s after a successful probe", b.State())
	}
	if tk := mustAllow(t, b); tk.Probe() {
		t.Fatal("closed breaker issued a probe")
	}
}

func TestFailedProbeReopensWithGrowingCooldown(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1, Cooldown: time.Second, MaxCooldown: 3 * time.Second})
	fail(b, mustAllow(t, b))
	for _, want := range []time.Duration{2 * time.Second, 3 * time.Second, 3 * time.Second} {
		clk.Add(b.Snapshot().Cooldown)
		fail(b, mustAllow(t, b)) // the probe fails
		s := b.Snapshot()
		if s.State != Open || s.Cooldown != want || !s.OpenUntil.Equal(clk.Now().Add(want)) {
			t.Fatalf("after failed probe: %+v, want open for %v", s, want)
		}
	}
	clk.Add(3 * time.Second)
	ok(b, mustAllow(t, b))
	if s := b.Snapshot(); s.State != Closed || s.Cooldown != time.Second || s.Opens != 4 {
		t.Fatalf("after successful probe: %+v", s)
	}
}

func TestCancelledProbeHandsTheSlotBack(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1})
	fail(b, mustAllow(t, b))
	clk.Add(DefaultCooldown)
	p := mustAllow(t, b)
	b.Report(p, Outcome{Kind: Neutral}) // e.g. it lost a hedge race
	if b.State() != HalfOpen {
		t.Fatalf("state %s", b.State())
	}
	if p2 := mustAllow(t, b); !p2.Probe() {
		t.Fatal("slot not handed back")
	}
}

func TestLostProbeTimesOut(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1, ProbeTimeout: 10 * time.Second})
	fail(b, mustAllow(t, b))
	clk.Add(DefaultCooldown)
	lost := mustAllow(t, b)
	clk.Add(10*time.Second - time.Nanosecond)
	wantRefused(t, b, ErrProbeInFlight)
	clk.Add(time.Nanosecond)
	second := mustAllow(t, b)
	ok(b, lost) // the presumed-lost probe reports late: ignored
	if b.State() != HalfOpen {
		t.Fatalf("a stale probe closed the breaker: %s", b.State())
	}
	fail(b, second)
	if b.State() != Open {
		t.Fatalf("state %s after the live probe failed", b.State())
	}
}

func TestStaleTicketsAreIgnored(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 2})
	early := []Ticket{mustAllow(t, b), mustAllow(t, b), mustAllow(t, b)}
	fail(b, early[0])
	fail(b, early[1])
	if b.State() != Open {
		t.Fatal("not open")
	}
	ok(b, early[2]) // issued while closed, reported while open
	if b.State() != Open {
		t.Fatalf("stale success changed state to %s", b.State())
	}
	clk.Add(DefaultCooldown)
	ok(b, mustAllow(t, b))
	fail(b, early[2]) // a double report of an old ticket
	if s := b.Snapshot(); s.State != Closed || s.ConsecutiveFailures != 0 {
		t.Fatalf("stale failure counted: %+v", s)
	}
	b.Report(Ticket{}, Outcome{Kind: Failure}) // zero ticket: ignored
	if b.Snapshot().ConsecutiveFailures != 0 {
		t.Fatal("zero ticket counted")
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{})
	notBefore := t0.Add(7 * time.Second)
	b.Report(mustAllow(t, b), Outcome{Kind: Throttled, NotBefore: notBefore})
	re := wantRefused(t, b, ErrBackoff)
	if !re.RetryAt.Equal(notBefore) {
		t.Fatalf("retry at %v, want %v", re.RetryAt, notBefore)
	}
	clk.Add(7*time.Second - time.Millisecond)
	wantRefused(t, b, ErrBackoff)
	clk.Add(time.Millisecond)
	ok(b, mustAllow(t, b))

	// A 503 with Retry-After is a failure and a hold.
	b.Report(mustAllow(t, b), Outcome{Kind: Failure, NotBefore: clk.Now().Add(3 * time.Second)})
	if s := b.Snapshot(); s.ConsecutiveFailures != 1 || !s.NotBefore.Equal(clk.Now().Add(3*time.Second)) {
		t.Fatalf("503 + Retry-After: %+v", s)
	}
	// An absurd Retry-After is capped.
	clk.Add(3 * time.Second)
	b.Report(mustAllow(t, b), Outcome{Kind: Throttled, NotBefore: clk.Now().Add(1000 * time.Hour)})
	if s := b.Snapshot(); !s.NotBefore.Equal(clk.Now().Add(DefaultMaxRetryAfter)) {
		t.Fatalf("cap: not before %v", s.NotBefore)
	}
}

func TestThrottleBackoffWithJitter(t *testing.T) {
	b, clk, r := newBreaker(t, Config{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second})
	// Nominal waits 100, 200, 400, 800, 1000, 1000 ms; r=0.5 draws 3/4 of
	// each, r=0 the floor d/2, r→1 the nominal d.
	nominal := []time.Duration{100, 200, 400, 800, 1000, 1000}
	draws := []float64{0.5, 0, 0.999999, 0.5, 0, 0.5}
	for i, n := range nominal {
		d := n * time.Millisecond
		r.v = draws[i]
		start := clk.Now()
		b.Report(mustAllow(t, b), Outcome{Kind: Throttled})
		wait := wantRefused(t, b, ErrBackoff).RetryAt.Sub(start)
		want := d/2 + time.Duration(draws[i]*float64(d/2))
		if wait != want || wait < d/2 || wait > d {
			t.Fatalf("429 #%d: wait %v, want %v in [%v, %v]", i+1, wait, want, d/2, d)
		}
		clk.Add(wait)
	}
	ok(b, mustAllow(t, b)) // success resets the exponent
	r.v = 0
	b.Report(mustAllow(t, b), Outcome{Kind: Throttled})
	if wait := wantRefused(t, b, ErrBackoff).RetryAt.Sub(clk.Now()); wait != 50*time.Millisecond {
		t.Fatalf("after success: wait %v, want 50ms", wait)
	}
}

func TestBackoffJitterSpreads(t *testing.T) {
	clk := clock.NewMock()
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		b, _ := New(clk, rnd, Config{})
		b.Report(mustAllow(t, b), Outcome{Kind: Throttled})
		w := b.Snapshot().NotBefore.Sub(clk.Now())
		if w < DefaultBackoffBase/2 || w > DefaultBackoffBase {
			t.Fatalf("wait %v outside [%v, %v]", w, DefaultBackoffBase/2, DefaultBackoffBase)
		}
		seen[w] = true
	}
	if len(seen) < 45 {
		t.Fatalf("only %d distinct waits in 50: no jitter", len(seen))
	}
}

func TestConcurrentCallersGetOneProbe(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1})
	fail(b, mustAllow(t, b))
	clk.Add(DefaultCooldown)
	var probes, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			tk, err := b.Allow()
			switch {
			case err == nil && tk.Probe():
				probes.Add(1)
			case errors.Is(err, ErrProbeInFlight):
				refused.Add(1)
			default:
				t.Errorf("Allow: ticket %+v err %v", tk, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if probes.Load() != 1 || refused.Load() != 63 {
		t.Fatalf("%d probes, %d refused; want 1 and 63", probes.Load(), refused.Load())
	}
}

func TestConcurrentReportsRace(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 3, Cooldown: time.Millisecond})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				tk, err := b.Allow()
				if err != nil {
					continue
				}
				kind := []Kind{Success, Failure, Failure, Neutral}[(g+i)%4]
				b.Report(tk, Outcome{Kind: kind})
				_ = b.Snapshot()
			}
		}(g)
	}
	for i := 0; i < 200; i++ {
		clk.Add(time.Millisecond)
	}
	wg.Wait()
	if s := b.Snapshot(); s.Opens == 0 {
		t.Fatalf("never opened under mixed failures: %+v", s)
	}
}

func TestStateChangeHook(t *testing.T) {
	var got []string
	b, clk, _ := newBreaker(t, Config{Failures: 1, OnStateChange: func(from, to State) {
		got = append(got, from.String()+">"+to.String())
	}})
	fail(b, mustAllow(t, b))
	clk.Add(DefaultCooldown)
	fail(b, mustAllow(t, b))
	clk.Add(2 * DefaultCooldown)
	ok(b, mustAllow(t, b))
	want := []string{"closed>open", "open>half-open", "half-open>open", "open>half-open", "half-open>closed"}
	if len(got) != len(want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("transitions %v, want %v", got, want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Failures: -1}, {CooldownFactor: 0.5}, {Cooldown: time.Minute, MaxCooldown: time.Second},
		{BackoffBase: time.Second, BackoffMax: time.Millisecond}, {ProbeTimeout: -1},
		{MaxCooldown: 48 * time.Hour},
	} {
		if _, err := New(nil, nil, c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	if _, err := New(nil, nil, Config{}); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestSet(t *testing.T) {
	clk := clock.NewMock()
	s, err := NewSet[string](clk, rand.New(rand.NewPCG(1, 1)), Config{Failures: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Ready("never-seen") {
		t.Fatal("unknown provider not ready")
	}
	if first, again := s.Get("a"), s.Get("a"); first != again {
		t.Fatal("Get returned different breakers")
	}
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func(k string) {
			defer wg.Done()
			b := s.Get(k)
			tk, err := b.Allow()
			if err != nil {
				t.Error(err)
				return
			}
			if k == "a" {
				b.Report(tk, Outcome{Kind: Failure})
			} else {
				b.Report(tk, Outcome{Kind: Throttled})
			}
		}(k)
	}
	wg.Wait()
	if s.Ready("a") || s.Ready("b") {
		t.Fatal("open / throttled breakers ready")
	}
	snaps := s.Snapshots()
	if len(snaps) != 4 || snaps["a"].State != Open || snaps["b"].NotBefore.IsZero() {
		t.Fatalf("snapshots %+v", snaps)
	}
	if _, err := NewSet[string](nil, nil, Config{Failures: -2}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

// TestSetOnChange: a set's breakers report their transitions with their
// key, after the shared hook.
func TestSetOnChange(t *testing.T) {
	clk := clock.NewMock()
	clk.Set(t0)
	var shared int
	var got []string
	s, err := NewSet[string](clk, rand.New(rand.NewPCG(1, 1)), Config{Failures: 1, OnStateChange: func(State, State) { shared++ }})
	if err != nil {
		t.Fatal(err)
	}
	s.OnChange(func(k string, from, to State) { got = append(got, k+":"+from.String()+">"+to.String()) })
	a, b := s.Get("a"), s.Get("b")
	fail(a, mustAllow(t, a))
	ok(b, mustAllow(t, b))
	if len(got) != 1 || got[0] != "a:closed>open" || shared != 1 {
		t.Fatalf("transitions %v (shared hook %d×), want a:closed>open once", got, shared)
	}
}

// TestEvidenceShortensAGrownCooldown: independent word of health newer
// than the failure that opened the breaker lets a probe through after the
// first cooldown, not after the grown one; older word, or word while the
// first cooldown runs, changes nothing.
func TestEvidenceShortensAGrownCooldown(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{Failures: 1, Cooldown: time.Second, MaxCooldown: time.Minute})
	fail(b, mustAllow(t, b))
	for range 4 { // failed probes grow the cooldown to 16 s
		clk.Add(b.Snapshot().Cooldown)
		fail(b, mustAllow(t, b))
	}
	if s := b.Snapshot(); s.Cooldown != 16*time.Second {
		t.Fatalf("cooldown %v, want 16s", s.Cooldown)
	}
	clk.Add(100 * time.Millisecond)
	b.Evidence(clk.Now()) // newer, but the first cooldown has not passed
	wantRefused(t, b, ErrOpen)
	clk.Add(900 * time.Millisecond)
	if tk := mustAllow(t, b); !tk.Probe() {
		t.Fatal("after evidence and the first cooldown, no probe")
	} else {
		fail(b, tk) // still failing: open again, cooldown 32 s
	}
	opened := clk.Now()
	b.Evidence(opened.Add(-time.Millisecond)) // from before this failure
	clk.Add(time.Second)
	wantRefused(t, b, ErrOpen)
	b.Evidence(clk.Now())
	if tk := mustAllow(t, b); !tk.Probe() {
		t.Fatal("fresh evidence after the first cooldown: no probe")
	} else {
		ok(b, tk)
	}
	if b.State() != Closed {
		t.Fatalf("state %s after a good probe", b.State())
	}
}

// TestDefaultCooldownCap: with the defaults, a provider failing every probe
// is tried again at least every DefaultMaxCooldown.
func TestDefaultCooldownCap(t *testing.T) {
	b, clk, _ := newBreaker(t, Config{})
	for range DefaultFailures {
		fail(b, mustAllow(t, b))
	}
	for range 10 {
		clk.Add(b.Snapshot().Cooldown)
		fail(b, mustAllow(t, b))
	}
	if c := b.Snapshot().Cooldown; c != DefaultMaxCooldown || c > 15*time.Second {
		t.Fatalf("cooldown %v after 10 failed probes, want the cap %v", c, DefaultMaxCooldown)
	}
}

package quantile

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Quantile is the latency quantile a Tracker estimates (the hedge point).
const Quantile = 0.95

// Tracker defaults.
const (
	DefaultWindow = 4096
	DefaultAlpha  = 0.1
)

// Config tunes a Tracker. Zero fields take the defaults.
type Config struct {
	// Window bounds the history behind the p95: after Window observations
	// the estimator is retired and a fresh one takes over once it has seen
	// Window/4, so the p95 follows a provider whose latency changes.
	// Negative means one estimator for the tracker's whole life.
	Window int
	// Alpha is the weight of the newest observation in the recent mean
	// (an exponentially weighted moving average), 0 < Alpha <= 1.
	Alpha float64
	// Warmup is the estimators' exact warm-up (see NewWithWarmup).
	Warmup int
}

func (c Config) withDefaults() (Config, error) {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	}
	if !(c.Alpha > 0 && c.Alpha <= 1) {
		return c, fmt.Errorf("%w: alpha %v not in (0, 1]", ErrInvalid, c.Alpha)
	}
	if c.Window > 0 && c.Window < 4*c.Warmup {
		return c, fmt.Errorf("%w: window %d smaller than 4 x warm-up %d", ErrInvalid, c.Window, c.Warmup)
	}
	return c, nil
}

// Snapshot is a provider's latency as the router's own clock measured it.
type Snapshot struct {
	Count int           // observations recorded over the tracker's life
	P95   time.Duration // P² estimate of the 0.95 quantile
	Mean  time.Duration // recent (EWMA) mean
}

// Known reports whether any latency has been recorded.
func (s Snapshot) Known() bool { return s.Count > 0 }

// Tracker holds one provider's latency: a P² p95 and a recent mean. It is
// safe for concurrent use.
//
// The estimator runs on log(latency). Quantiles commute with monotone
// maps, so this estimates the same p95, but the parabolic interpolation
// between markers is far better conditioned on a heavy right tail (see the
// package tests for the measured difference).
type Tracker struct {
	cfg Config

	mu    sync.Mutex
	cur   *Estimator
	prev  *Estimator // retired estimator, answers until cur has Window/4
	count int
	mean  float64 // nanoseconds
}

// NewTracker returns an empty tracker.
func NewTracker(cfg Config) (*Tracker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("p2: tracker: %w", err)
	}
	t := &Tracker{cfg: cfg}
	t.cur = t.newEstimator()
	return t, nil
}

func (t *Tracker) newEstimator() *Estimator {
	e, err := NewWithWarmup(Quantile, t.cfg.Warmup)
	if err != nil { // unreachable: cfg was validated
		panic(err)
	}
	return e
}

// Observe records one completed request's latency. Negative durations are
// ignored.
func (t *Tracker) Observe(d time.Duration) {
	if d < 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(d)
}

// ObserveCensored records an attempt that was cancelled after d, whose true
// latency is therefore at least d (a hedge loser). It is recorded only when
// d already exceeds the current p95: then the sample's side of the quantile
// is known, and dropping it would bias the p95 low because slow requests
// are exactly the ones a hedge cancels. It reports whether d was recorded.
func (t *Tracker) ObserveCensored(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count == 0 || d <= t.p95() {
		return false
	}
	t.add(d)
	return true
}

func (t *Tracker) add(d time.Duration) {
	ns := math.Max(float64(d), 1)
	t.cur.Add(math.Log(ns))
	if t.cfg.Window > 0 && t.cur.Count() >= t.cfg.Window {
		t.prev, t.cur = t.cur, t.newEstimator()
	}
	if t.count == 0 {
		t.mean = ns
	} else {
		t.mean += t.cfg.Alpha * (ns - t.mean)
	}
	t.count++
}

func (t *Tracker) p95() time.Duration {
	e := t.cur
	if t.prev != nil && e.Count() < t.cfg.Window/4 {
		e = t.prev
	}
	if e.Count() == 0 {
		return 0
	}
	return time.Duration(math.Round(math.Exp(e.Quantile())))
}

// Snapshot returns the current figures; P95 and Mean are zero until the
// first observation.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count == 0 {
		return Snapshot{}
	}
	return Snapshot{Count: t.count, P95: t.p95(), Mean: time.Duration(math.Round(t.mean))}
}

// Set is one Tracker per key (a provider's peer ID), created on first use.
// It is safe for concurrent use.
type Set[K comparable] struct {
	cfg Config
	mu  sync.Mutex
	m   map[K]*Tracker
}

// NewSet returns an empty set whose trackers use cfg.
func NewSet[K comparable](cfg Config) (*Set[K], error) {
	if _, err := NewTracker(cfg); err != nil {
		return nil, err
	}
	return &Set[K]{cfg: cfg, m: make(map[K]*Tracker)}, nil
}

// Tracker returns k's tracker, creating it.
func (s *Set[K]) Tracker(k K) *Tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[k]
	if !ok {
		t, _ = NewTracker(s.cfg) // cfg validated by NewSet
		s.m[k] = t
	}
	return t
}

// Observe records a completed request's latency for k.
func (s *Set[K]) Observe(k K, d time.Duration) { s.Tracker(k).Observe(d) }

// ObserveCensored records a cancelled attempt for k (see
// Tracker.ObserveCensored).
func (s *Set[K]) ObserveCensored(k K, d time.Duration) bool {
	return s.Tracker(k).ObserveCensored(d)
}

// Snapshot returns k's figures, zero if k was never observed.
func (s *Set[K]) Snapshot(k K) Snapshot {
	s.mu.Lock()
	t, ok := s.m[k]
	s.mu.Unlock()
	if !ok {
		return Snapshot{}
	}
	return t.Snapshot()
}

// Forget drops k's tracker.
func (s *Set[K]) Forget(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
}

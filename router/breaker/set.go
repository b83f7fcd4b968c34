package breaker

import (
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// lockedRand lets the breakers of a Set share one jitter source.
type lockedRand struct {
	mu sync.Mutex
	r  Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// Set is one Breaker per key (a provider's peer ID), created closed on
// first use, all with the same config, clock and jitter source. It is safe
// for concurrent use.
type Set[K comparable] struct {
	cfg   Config
	clock clock.Clock
	rand  Rand

	mu       sync.Mutex
	m        map[K]*Breaker
	onChange func(k K, from, to State)
}

// OnChange makes every breaker of the set report its transitions with its
// key (after cfg.OnStateChange, outside the breaker's lock); call it before
// the first Get.
func (s *Set[K]) OnChange(f func(k K, from, to State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = f
}

// NewSet validates cfg and returns an empty set. cfg.OnStateChange, if set,
// is shared by every breaker.
func NewSet[K comparable](clk clock.Clock, rnd Rand, cfg Config) (*Set[K], error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if rnd != nil {
		rnd = &lockedRand{r: rnd}
	}
	return &Set[K]{cfg: cfg, clock: clk, rand: rnd, m: make(map[K]*Breaker)}, nil
}

// Get returns k's breaker, creating it.
func (s *Set[K]) Get(k K) *Breaker {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[k]
	if !ok {
		cfg := s.cfg
		if f, prev := s.onChange, cfg.OnStateChange; f != nil {
			cfg.OnStateChange = func(from, to State) {
				if prev != nil {
					prev(from, to)
				}
				f(k, from, to)
			}
		}
		b, _ = New(s.clock, s.rand, cfg) // cfg validated by NewSet
		s.m[k] = b
	}
	return b
}

// Ready reports whether k's breaker would admit a request now; a key never
// seen is ready.
func (s *Set[K]) Ready(k K) bool {
	s.mu.Lock()
	b, ok := s.m[k]
	s.mu.Unlock()
	return !ok || b.Ready()
}

// Snapshots returns every breaker's figures.
func (s *Set[K]) Snapshots() map[K]Snapshot {
	s.mu.Lock()
	bs := make(map[K]*Breaker, len(s.m))
	for k, b := range s.m {
		bs[k] = b
	}
	s.mu.Unlock()
	out := make(map[K]Snapshot, len(bs))
	for k, b := range bs {
		out[k] = b.Snapshot()
	}
	return out
}

// Evidence passes independent word of k's health to its breaker, if k
// has one (see Breaker.Evidence).
func (s *Set[K]) Evidence(k K, at time.Time) {
	s.mu.Lock()
	b, ok := s.m[k]
	s.mu.Unlock()
	if ok {
		b.Evidence(at)
	}
}

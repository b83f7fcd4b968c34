package breaker

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// Rand is the jitter source; *rand.Rand from math/rand/v2 satisfies it. The
// breaker calls it under its own lock.
type Rand interface{ Float64() float64 }

type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// Breaker guards one provider. It is safe for concurrent use.
type Breaker struct {
	cfg   Config
	clock clock.Clock
	rand  Rand

	mu          sync.Mutex
	state       State
	gen         uint64 // bumped on every transition; stale tickets are ignored
	failures    int    // consecutive failures in the closed state
	cooldown    time.Duration
	openUntil   time.Time
	openedAt    time.Time
	probing     bool
	probeStart  time.Time
	notBefore   time.Time
	throttles   int // consecutive throttled outcomes, for the backoff exponent
	opens       uint64
	pendingEmit []transition
}

type transition struct{ from, to State }

// New returns a closed breaker. A nil clock is the wall clock; a nil rand is
// math/rand/v2's global source.
func New(clk clock.Clock, rnd Rand, cfg Config) (*Breaker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.New()
	}
	if rnd == nil {
		rnd = globalRand{}
	}
	return &Breaker{cfg: cfg, clock: clk, rand: rnd, cooldown: cfg.Cooldown}, nil
}

// Allow admits one request or says why not. Every ticket it returns must be
// passed to Report.
func (b *Breaker) Allow() (Ticket, error) {
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.advance(now)
	switch b.state {
	case Open:
		return Ticket{}, &RejectedError{Reason: ErrOpen, RetryAt: later(b.openUntil, b.notBefore)}
	case HalfOpen:
		if b.probing && now.Sub(b.probeStart) < b.cfg.ProbeTimeout {
			return Ticket{}, &RejectedError{Reason: ErrProbeInFlight}
		}
	}
	if now.Before(b.notBefore) {
		return Ticket{}, &RejectedError{Reason: ErrBackoff, RetryAt: b.notBefore}
	}
	if b.state == HalfOpen {
		if b.probing { // the previous probe was never reported: presume it lost
			b.gen++
		}
		b.probing, b.probeStart = true, now
		return Ticket{gen: b.gen, probe: true, ok: true}, nil
	}
	return Ticket{gen: b.gen, ok: true}, nil
}

// Ready reports whether Allow would admit a request now, without taking a
// ticket. Strategies use it to leave out providers they may not call.
func (b *Breaker) Ready() bool {
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.advance(now)
	if now.Before(b.notBefore) || b.state == Open {
		return false
	}
	return b.state == Closed || !b.probing || now.Sub(b.probeStart) >= b.cfg.ProbeTimeout
}

// Report records what became of an admitted request. A ticket issued
// before the breaker last changed state only contributes its NotBefore.
func (b *Breaker) Report(t Ticket, o Outcome) {
	if !t.ok {
		return
	}
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if !o.NotBefore.IsZero() {
		b.holdUntil(now, o.NotBefore)
	}
	if o.Kind == Throttled {
		b.throttles++
		if !o.NotBefore.After(now) {
			b.holdUntil(now, now.Add(b.backoff()))
		}
	}
	b.advance(now)
	if t.gen != b.gen {
		return
	}
	switch o.Kind {
	case Success:
		b.failures, b.throttles = 0, 0
		if t.probe {
			b.cooldown = b.cfg.Cooldown
			b.to(Closed)
		}
	case Failure:
		if t.probe {
			b.cooldown = min(time.Duration(float64(b.cooldown)*b.cfg.CooldownFactor), b.cfg.MaxCooldown)
			b.open(now)
			return
		}
		if b.state == Closed {
			b.failures++
			if b.failures >= b.cfg.Failures {
				b.open(now)
			}
		}
	default: // Throttled, Neutral: hand the probe slot back
		if t.probe {
			b.probing = false
		}
	}
}

// Evidence is independent word that the provider was healthy at time at
// (a validator's probe it answered, say). An open breaker whose evidence
// is newer than the failure that opened it goes half-open as soon as the
// first cooldown has passed, instead of waiting out a cooldown grown by
// earlier failed probes: a recovered provider is tried again at once,
// and one still failing is tried at most once per base cooldown.
func (b *Breaker) Evidence(at time.Time) {
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if b.state != Open || !at.After(b.openedAt) {
		return
	}
	if earliest := b.openedAt.Add(b.cfg.Cooldown); b.openUntil.After(earliest) {
		b.openUntil = earliest
	}
	b.advance(now)
}

// holdUntil extends the not-before time, capped at MaxRetryAfter from now.
func (b *Breaker) holdUntil(now, t time.Time) {
	if limit := now.Add(b.cfg.MaxRetryAfter); t.After(limit) {
		t = limit
	}
	b.notBefore = later(b.notBefore, t)
}

// backoff is the wait after the b.throttles-th consecutive 429 without a
// Retry-After: BackoffBase·2^(k-1) capped at BackoffMax, with "equal
// jitter" (uniform in [d/2, d]) so a crowd of routers spreads out but none
// comes back sooner than half the nominal wait.
func (b *Breaker) backoff() time.Duration {
	d := b.cfg.BackoffMax
	if shift := b.throttles - 1; shift < 30 {
		d = min(b.cfg.BackoffBase<<shift, b.cfg.BackoffMax)
	}
	return d/2 + time.Duration(b.rand.Float64()*float64(d/2))
}

func (b *Breaker) open(now time.Time) {
	b.failures, b.probing = 0, false
	b.openedAt, b.openUntil = now, now.Add(b.cooldown)
	b.opens++
	b.to(Open)
}

// advance moves an open breaker whose cooldown has passed to half-open.
func (b *Breaker) advance(now time.Time) {
	if b.state == Open && !now.Before(b.openUntil) {
		b.probing = false
		b.to(HalfOpen)
	}
}

func (b *Breaker) to(s State) {
	if s != b.state {
		b.pendingEmit = append(b.pendingEmit, transition{b.state, s})
	}
	b.state = s
	b.gen++
}

// emit runs the state-change hook outside the lock.
func (b *Breaker) emit() {
	b.mu.Lock()
	ts := b.pendingEmit
	b.pendingEmit = nil
	b.mu.Unlock()
	if b.cfg.OnStateChange != nil {
		for _, t := range ts {
			b.cfg.OnStateChange(t.from, t.to)
		}
	}
}

// State returns the current state.
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	b.advance(b.clock.Now())
	return b.state
}

// Snapshot is a breaker's state for metrics and the API.
type Snapshot struct {
	State               State         `json:"state"`
	ConsecutiveFailures int           `json:"consecutive_failures"`
	Cooldown            time.Duration `json:"cooldown"`
	OpenUntil           time.Time     `json:"open_until,omitzero"`
	NotBefore           time.Time     `json:"not_before,omitzero"`
	ProbeInFlight       bool          `json:"probe_in_flight"`
	Opens               uint64        `json:"opens"`
}

// Snapshot returns the current figures.
func (b *Breaker) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.emit()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.advance(now)
	s := Snapshot{State: b.state, ConsecutiveFailures: b.failures, Cooldown: b.cooldown,
		ProbeInFlight: b.probing, Opens: b.opens}
	if b.state == Open {
		s.OpenUntil = b.openUntil
	}
	if now.Before(b.notBefore) {
		s.NotBefore = b.notBefore
	}
	return s
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

package gateway

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// maxMaxTokens is the protocol's bound on max_tokens.
const maxMaxTokens = infer.MaxMaxTokens

// BuyerLimits is one buyer's fair share of this gateway: at most
// MaxConcurrent requests in flight and RatePerMinute new requests a minute
// (a token bucket holding BurstSeconds of the rate). 0 in a buyer's own
// entry means the gateway's default; the defaults themselves must be set.
type BuyerLimits struct {
	MaxConcurrent int `toml:"max_concurrent"`
	RatePerMinute int `toml:"rate_per_minute"`
}

// BurstSeconds is how many seconds of its rate a buyer may spend at once.
const BurstSeconds = 10

// DefaultBuyerLimits are the fair share of a buyer that names none: 32
// calls at once and 100 a second (a laptop's own gateway serves one buyer
// at full speed, the benchmarks' 50/s included), still far from one
// buyer's flood filling a shared gateway's providers; an operator sharing
// a gateway sets tighter ones per buyer.
func DefaultBuyerLimits() BuyerLimits { return BuyerLimits{MaxConcurrent: 32, RatePerMinute: 6000} }

// Validate checks limits (0 allowed: "the default").
func (l BuyerLimits) Validate() error {
	var errs []error
	if l.MaxConcurrent < 0 || l.MaxConcurrent > 100_000 {
		errs = append(errs, fmt.Errorf("max_concurrent %d outside 0..100000", l.MaxConcurrent))
	}
	if l.RatePerMinute < 0 || l.RatePerMinute > 6_000_000 {
		errs = append(errs, fmt.Errorf("rate_per_minute %d outside 0..6000000", l.RatePerMinute))
	}
	return errors.Join(errs...)
}

// or returns l with every zero field taken from def.
func (l BuyerLimits) or(def BuyerLimits) BuyerLimits {
	if l.MaxConcurrent == 0 {
		l.MaxConcurrent = def.MaxConcurrent
	}
	if l.RatePerMinute == 0 {
		l.RatePerMinute = def.RatePerMinute
	}
	return l
}

// limiter enforces every buyer's share.
type limiter struct {
	clock clock.Clock
	def   BuyerLimits
	per   map[string]BuyerLimits // read-only after newLimiter

	mu     sync.Mutex
	buyers map[string]*buyerState
}

type buyerState struct {
	inFlight int
	tokens   float64
	last     time.Time
}

func newLimiter(clk clock.Clock, def BuyerLimits, per map[string]BuyerLimits) *limiter {
	return &limiter{clock: clk, def: def, per: per, buyers: map[string]*buyerState{}}
}

// admit takes one of account's slots and one token of its rate, or says
// which limit the request exceeds (429 with Retry-After). release must be
// called once the request ends.
func (l *limiter) admit(account string) (release func(), err error) {
	lim := l.per[account].or(l.def)
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buyers[account]
	burst := math.Max(1, float64(lim.RatePerMinute)*BurstSeconds/60)
	if !ok {
		b = &buyerState{tokens: burst, last: now}
		l.buyers[account] = b
	}
	perSec := float64(lim.RatePerMinute) / 60
	b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*perSec)
	b.last = now
	if b.inFlight >= lim.MaxConcurrent {
		return nil, &Error{Status: http.StatusTooManyRequests, Code: "concurrency_limit_exceeded", RetryAfter: time.Second,
			Message: fmt.Sprintf("account %s has %d requests in flight, its limit (max_concurrent)", account, lim.MaxConcurrent)}
	}
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / perSec * float64(time.Second))
		return nil, &Error{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", RetryAfter: max(time.Second, wait.Round(time.Second)),
			Message: fmt.Sprintf("account %s exceeded its rate of %d requests per minute (rate_per_minute)", account, lim.RatePerMinute)}
	}
	b.tokens--
	b.inFlight++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			b.inFlight--
			l.mu.Unlock()
		})
	}, nil
}

package strategy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Name is a routing strategy.
type Name string

const (
	Price    Name = "price"    // cheapest first
	Latency  Name = "latency"  // fastest first, on the router's own clock
	Standing Name = "standing" // best consensus standing first
	Random   Name = "random"   // uniform shuffle (injected source)
	Weighted Name = "weighted" // the default: weighted score of the signals
)

// Names lists every strategy.
var Names = []Name{Price, Latency, Standing, Random, Weighted}

// Errors Rank and Parse return, wrapped.
var (
	ErrUnknownStrategy = errors.New("strategy: unknown strategy")
	ErrNoCandidate     = errors.New("strategy: no eligible provider")
	ErrWeights         = errors.New("strategy: invalid weights")
)

// Parse reads a strategy name as a request gives it; empty means Weighted.
func Parse(s string) (Name, error) {
	n := Name(strings.ToLower(strings.TrimSpace(s)))
	if n == "" {
		return Weighted, nil
	}
	if !slices.Contains(Names, n) {
		return "", fmt.Errorf("%w %q (want one of %v)", ErrUnknownStrategy, s, Names)
	}
	return n, nil
}

// MaxStanding is a standing of 1 in basis points.
const MaxStanding = 10_000

// Candidate is one provider able to serve a request, with every signal the
// router has about it.
type Candidate struct {
	Peer  peer.ID
	Price uint64 // the request's total price at this provider, micro-units
	// P95 and Mean are the router's own latency figures (P² p95 and recent
	// mean); meaningless unless LatencyKnown.
	P95          time.Duration
	Mean         time.Duration
	LatencyKnown bool
	Standing     uint32 // consensus standing in basis points, 0..MaxStanding
	InFlight     uint32 // from the latest heartbeat
	Capacity     uint32 // from the latest heartbeat; 0 when unknown
	Up           bool   // the failure detector says up
	BreakerReady bool   // the provider's breaker would admit a request now
}

// Saturated reports whether the provider's last heartbeat showed no free
// capacity.
func (c Candidate) Saturated() bool { return c.Capacity > 0 && c.InFlight >= c.Capacity }

// Weights of the weighted strategy's signals. Only their ratios matter.
type Weights struct {
	Price    float64 `json:"price" toml:"price"`
	Latency  float64 `json:"latency" toml:"latency"`
	Standing float64 `json:"standing" toml:"standing"`
	Load     float64 `json:"load" toml:"load"`
}

// DefaultWeights are production's weights (gateway.DefaultConfig, the
// [router.weights] defaults) and the ones the tail benchmark measures:
// price, latency and standing alike, with a nudge away from busy providers.
var DefaultWeights = Weights{Price: 1, Latency: 1, Standing: 1, Load: 0.1}

func (w Weights) check() error {
	sum := 0.0
	for _, v := range []float64{w.Price, w.Latency, w.Standing, w.Load} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %+v", ErrWeights, w)
		}
		sum += v
	}
	if sum == 0 || math.IsInf(sum, 0) {
		return fmt.Errorf("%w: %+v sum to %v", ErrWeights, w, sum)
	}
	return nil
}

// Reason a candidate was left out.
type Reason string

const (
	ReasonDown      Reason = "down"
	ReasonBreaker   Reason = "breaker"
	ReasonExcluded  Reason = "excluded"
	ReasonOverPrice Reason = "over max price"
	ReasonDuplicate Reason = "duplicate"
)

// Exclusion is a candidate left out of a ranking, and why.
type Exclusion struct {
	Peer   peer.ID `json:"peer"`
	Reason Reason  `json:"reason"`
}

// Filter narrows the candidates of one request.
type Filter struct {
	Exclude  map[peer.ID]bool // providers this request must not use
	MaxPrice uint64           // the buyer's cap; 0 means none
}

// Scored is a ranked candidate with its weighted score (computed for every
// strategy, for display).
type Scored struct {
	Candidate
	Score float64 `json:"score"`
}

// Ranking is the primary (Order[0]) and its fallbacks in order, and what
// was left out.
type Ranking struct {
	Order    []Scored
	Excluded []Exclusion
}

// Candidates returns the ordered candidates without scores.
func (r Ranking) Candidates() []Candidate {
	out := make([]Candidate, len(r.Order))
	for i, s := range r.Order {
		out[i] = s.Candidate
	}
	return out
}

// Rand is the random strategy's source; *rand.Rand from math/rand/v2
// satisfies it. The Selector serialises calls to it.
type Rand interface{ IntN(n int) int }

type globalRand struct{}

func (globalRand) IntN(n int) int { return rand.IntN(n) }

// Selector ranks candidates. It is safe for concurrent use.
type Selector struct {
	weights Weights
	mu      sync.Mutex
	rnd     Rand
}

// New returns a selector with the weighted strategy's weights and the
// random strategy's source (nil: math/rand/v2's global source).
func New(w Weights, rnd Rand) (*Selector, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	if rnd == nil {
		rnd = globalRand{}
	}
	return &Selector{weights: w, rnd: rnd}, nil
}

// Weights returns the weighted strategy's weights.
func (s *Selector) Weights() Weights { return s.weights }

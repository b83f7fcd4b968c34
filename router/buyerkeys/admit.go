package buyerkeys

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// ErrRevoked is a revoked key's refusal.
var ErrRevoked = errors.New("buyerkeys: this key is revoked")

// BudgetError refuses a call its key's budget cannot cover: the buyer is
// told the budget, what is spent and held, and when the period resets.
type BudgetError struct {
	Budget, Spent, Reserved, Worst uint64
	Reset                          time.Time // zero: the budget never resets
	// PerRequest is set when the call's worst case is above the key's
	// max_per_request (Budget is then that cap).
	PerRequest bool
}

func (e *BudgetError) Error() string {
	if e.PerRequest {
		return fmt.Sprintf("buyerkeys: this call's worst-case price %d is above the key's max_per_request %d micro-units", e.Worst, e.Budget)
	}
	reset := "never (the budget has no period)"
	if !e.Reset.IsZero() {
		reset = e.Reset.UTC().Format(time.RFC3339)
	}
	worst := "" // refused at intake: the budget is spent, whatever the call costs
	if e.Worst > 0 {
		worst = fmt.Sprintf("; this call's worst case is %d", e.Worst)
	}
	return fmt.Sprintf("buyerkeys: the key's budget of %d micro-units has %d spent and %d held by calls in flight%s; the budget resets %s",
		e.Budget, e.Spent, e.Reserved, worst, reset)
}

// LimitError refuses a call over the key's concurrency or rate.
type LimitError struct {
	// Code is the gateway's own for the same refusal of an account:
	// concurrency_limit_exceeded or rate_limit_exceeded.
	Code       string
	What       string
	RetryAfter time.Duration
}

func (e *LimitError) Error() string { return "buyerkeys: " + e.What }

// Call is one admitted call of a key: it holds a concurrency slot and,
// once Reserve ran, a worst-case reservation, until Done.
type Call struct {
	s        *Store
	id       string
	reserved uint64
	done     bool
}

type callKey struct{}

// WithCall carries c to the gateway, which reserves and bills through it.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the call ctx carries, nil for a call of no run-time key.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Admit admits a call of the key with token hash: refused if the key is
// revoked, its period's budget is spent, or it is at its concurrency or
// rate. ok is false for a hash that is no run-time key.
func (s *Store) Admit(hash string) (c *Call, k *Key, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byHash[hash]
	if !ok {
		return nil, nil, false, nil
	}
	k, lv := s.keys[id], s.live[id]
	if k.Revoked {
		return nil, nil, true, ErrRevoked
	}
	now := s.clock.Now()
	spent, reset := s.spentLocked(k, lv, now)
	if k.MaxBudget > 0 && spent >= k.MaxBudget {
		return nil, nil, true, &BudgetError{Budget: k.MaxBudget, Spent: spent, Reserved: lv.reserved, Reset: reset}
	}
	if k.MaxConcurrent > 0 && lv.inflight >= k.MaxConcurrent {
		return nil, nil, true, &LimitError{Code: "concurrency_limit_exceeded", What: fmt.Sprintf("the key's %d concurrent calls are in flight", k.MaxConcurrent), RetryAfter: time.Second}
	}
	if k.RatePerMinute > 0 {
		cut := now.Add(-time.Minute)
		for len(lv.recent) > 0 && !lv.recent[0].After(cut) {
			lv.recent = lv.recent[1:]
		}
		if len(lv.recent) >= k.RatePerMinute {
			return nil, nil, true, &LimitError{Code: "rate_limit_exceeded", What: fmt.Sprintf("the key's rate of %d calls a minute is reached", k.RatePerMinute),
				RetryAfter: max(lv.recent[0].Sub(cut), time.Second)}
		}
		lv.recent = append(lv.recent, now)
	}
	lv.inflight++
	return &Call{s: s, id: id}, k.clone(), true, nil
}

// spentLocked is the key's billed spend in the period holding now, and
// when that period ends.
func (s *Store) spentLocked(k *Key, lv *live, now time.Time) (uint64, time.Time) {
	d, _ := ParsePeriod(k.BudgetDuration) // validated when stored
	start, reset := periodOf(time.UnixMilli(k.CreatedMs), now, d)
	if lv.spend.PeriodStartMs != start.UnixMilli() {
		return 0, reset
	}
	return lv.spend.Period, reset
}

// Reserve holds worst, the call's worst-case price, against the key's
// budget until the call is billed or done; a budget that cannot cover it
// beside what is spent and held refuses the call. A second Reserve
// replaces the first (a request quoted again).
func (c *Call) Reserve(worst uint64) error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	k, lv := s.keys[c.id], s.live[c.id]
	lv.reserved -= c.reserved
	c.reserved = 0
	if k.MaxPerRequest > 0 && worst > k.MaxPerRequest {
		return &BudgetError{Budget: k.MaxPerRequest, Worst: worst, PerRequest: true}
	}
	if k.MaxBudget > 0 {
		spent, reset := s.spentLocked(k, lv, s.clock.Now())
		sum, c1 := bits.Add64(spent, lv.reserved, 0)
		sum, c2 := bits.Add64(sum, worst, 0)
		if c1|c2 != 0 || sum > k.MaxBudget {
			return &BudgetError{Budget: k.MaxBudget, Spent: spent, Reserved: lv.reserved, Worst: worst, Reset: reset}
		}
	}
	lv.reserved += worst
	c.reserved = worst
	return nil
}

// Done ends the call: what it still holds is released.
func (c *Call) Done() {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	lv := s.live[c.id]
	lv.reserved -= c.reserved
	c.reserved = 0
	lv.inflight--
}

// Key is the ID of the call's key.
func (c *Call) Key() string { return c.id }

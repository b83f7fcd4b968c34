package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Waiting out a provider that refused for now. When every candidate has
// failed with something that passes (a 429, a 5xx, an unreachable
// provider) and no other can take the request, the gateway waits until
// the first of them may be tried again (its Retry-After, or a short
// backoff after a 5xx) and runs the race again, while the request's
// deadline leaves room for an answer; a market with one provider of a
// model does not fail a request its provider would serve in two seconds.
const (
	// maxWaitRounds bounds the races after the first.
	maxWaitRounds = 3
	// retryBackoff is the first wait after a failure without a
	// Retry-After; it doubles each round.
	retryBackoff = 250 * time.Millisecond
	// minRetryRoom is the least time a retry must leave before the
	// deadline: less cannot bring an answer back.
	minRetryRoom = time.Second
	// maxRetryWait is the longest single wait: a provider held back for
	// longer (an open breaker's cooldown, a long Retry-After) fails the
	// request now, with the hint, rather than holding the buyer.
	maxRetryWait = 5 * time.Second
)

// passing reports whether a race's failure may pass if waited out: the
// last provider answered "not now" (a 429 or a 5xx), or none was
// eligible because each is held back by a Retry-After or an open breaker.
// So may a provider still waiting for the settler's payment record of an
// earlier call (402 unpaid): the record is this node's own, on its way
// from the outbox, which retries a failed delivery within seconds.
// A refusal of the request itself (400-class), a provider that could not
// be reached, and the gateway's own refusals stand.
func passing(err error) bool {
	if errors.Is(err, hedge.ErrNoCandidate) {
		return true
	}
	if !errors.Is(err, hedge.ErrExhausted) {
		return false
	}
	var ef *infer.ErrorFrame
	return errors.As(err, &ef) && (ef.Status == http.StatusTooManyRequests || ef.Status >= 500 || ef.Code == terms.CodeUnpaid)
}

// othersLeft reports whether a candidate the race did not try could take
// the request now: the race stopped at its failover limit, and waiting
// for the tried ones would exceed that limit.
func (g *Gateway) othersLeft(cands []strategy.Candidate, rep hedge.Report, eligible func(strategy.Candidate) bool) bool {
	tried := rep.AttemptsPer()
	for _, c := range cands {
		if tried[c.Peer] == 0 && eligible(c) {
			return true
		}
	}
	return false
}

// retryWait is how long to wait before round (1-based) of a request
// whose candidates all failed: until the first of them is ready again
// (its breaker's Retry-After hold or open cooldown), at least the
// doubling backoff.
func (g *Gateway) retryWait(cands []strategy.Candidate, round int) time.Duration {
	now := g.clock.Now()
	wait := retryBackoff << (round - 1)
	var soonest time.Duration = -1
	for _, c := range cands {
		s := g.breakers.Get(c.Peer).Snapshot()
		ready := now
		if s.NotBefore.After(ready) {
			ready = s.NotBefore
		}
		if !s.OpenUntil.IsZero() && s.OpenUntil.After(ready) {
			ready = s.OpenUntil
		}
		if d := ready.Sub(now); soonest < 0 || d < soonest {
			soonest = d
		}
	}
	return max(wait, soonest)
}

// raceWithRetries runs the race and, while its failure may pass and the
// deadline allows, waits and runs it again. The report joins every race's
// tries.
func (g *Gateway) raceWithRetries(ctx context.Context, cands []strategy.Candidate, eligible func(strategy.Candidate) bool,
	run func() (*stream, hedge.Report, error)) (*stream, hedge.Report, error) {
	s, rep, err := run()
	for round := 1; err != nil && round <= maxWaitRounds && passing(err) && ctx.Err() == nil && !g.othersLeft(cands, rep, eligible); round++ {
		wait := g.retryWait(cands, round)
		if dl, ok := ctx.Deadline(); wait > maxRetryWait || ok && g.clock.Until(dl) < wait+minRetryRoom {
			break
		}
		g.metrics.waitRetries.Inc()
		g.log.Info("every provider refused for now; waiting to try again", "wait", wait, "round", round, "err", oneLine(err))
		select {
		case <-ctx.Done():
			return s, rep, err
		case <-g.clock.After(wait):
		}
		var more hedge.Report
		s, more, err = run()
		rep = joinReports(rep, more)
	}
	return s, rep, err
}

// allHeldBack reports whether every candidate's breaker holds it back
// now, and for how long the first of them.
func (g *Gateway) allHeldBack(cands []strategy.Candidate) (time.Duration, bool) {
	for _, c := range cands {
		if c.BreakerReady {
			return 0, false
		}
	}
	return g.retryWait(cands, 1), len(cands) > 0
}

// candidatesWaiting is candidates, waiting (as raceWithRetries does) while
// every candidate is held back for a short while: a buyer pinned to a
// provider that just answered 429 with Retry-After 1 is served a second
// later instead of refused.
func (g *Gateway) candidatesWaiting(ctx context.Context, req *Request) ([]strategy.Candidate, map[peer.ID]choice, error) {
	for round := 1; ; round++ {
		cands, choices, err := g.candidates(ctx, req)
		var ge *Error
		if err == nil || round > maxWaitRounds || !errors.As(err, &ge) || !ge.heldBack || ge.RetryAfter > maxRetryWait {
			return cands, choices, err
		}
		if dl, ok := ctx.Deadline(); ok && g.clock.Until(dl) < ge.RetryAfter+minRetryRoom {
			return cands, choices, err
		}
		g.metrics.waitRetries.Inc()
		select {
		case <-ctx.Done():
			return cands, choices, err
		case <-g.clock.After(max(ge.RetryAfter, time.Millisecond)):
		}
	}
}

func joinReports(a, b hedge.Report) hedge.Report {
	b.Tries = append(a.Tries, b.Tries...)
	b.HedgesDispatched += a.HedgesDispatched
	b.Failovers += a.Failovers + 1
	b.Elapsed += a.Elapsed
	return b
}

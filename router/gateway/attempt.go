package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// stream is one attempt's open answer: its first token has arrived (or its
// final frame); the rest is read from tokens until it is closed.
type stream struct {
	choice choice
	req    *infer.Request
	first  *infer.TokenFrame
	ids    []int // token IDs received, for an exact continuation
	tokens chan *infer.TokenFrame
	// stop, once closed, makes the transport stop the provider (ErrStop):
	// the buyer left and what it generated from then on is not wanted.
	stop     chan struct{}
	stopOnce sync.Once
	// Set before tokens is closed:
	final *infer.FinalFrame
	stats infer.WireStats
	err   error
	won   atomic.Bool
	start time.Time
	probe bool // a synthetic probe (Request.Probe)
	// answered: the first token came (the transport goroutine's alone).
	answered bool
}

// halt asks the transport to stop the provider.
func (s *stream) halt() { s.stopOnce.Do(func() { close(s.stop) }) }

// tokenBuffer bounds the frames held between the provider and the buyer;
// when it is full the provider's stream is back-pressured.
const tokenBuffer = 256

func (g *Gateway) inferRequest(req *Request, c choice, continuation string) *infer.Request {
	nonce := make([]byte, infer.NonceSize)
	_, _ = rand.Read(nonce)
	return &infer.Request{
		Nonce: nonce, ModelID: c.offer.Model.ModelID, Model: c.offer.Model.Name, Chat: req.Chat,
		Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling, TopLogProbs: req.TopLogProbs,
		Stream: req.Stream, Verification: req.Verification, Continuation: continuation, QuoteDigest: c.quote.Digest[:],
		Pay: g.payAuth(req.Payer),
	}
}

// open sends one attempt and returns once it has answered.
func (g *Gateway) open(ctx context.Context, c choice, ir *infer.Request, probe bool) (*stream, error) {
	ctx, span := g.startAttempt(ctx, c)
	br := g.breakers.Get(c.offer.Peer)
	ticket, err := br.Allow()
	if err != nil {
		endAttempt(span, OutcomeBreakerOpen, err)
		return nil, err
	}
	start := g.clock.Now()
	s := &stream{choice: c, req: ir, tokens: make(chan *infer.TokenFrame, tokenBuffer), stop: make(chan struct{}), start: start, probe: probe}
	cfg := infer.ClientConfig{FirstTokenTimeout: g.firstTokenTimeout(c.offer.Peer), StallTimeout: g.gaps.stallTimeout(g.cfg, c.offer.Peer), StopGrace: transportStopGrace}
	pace := &tokenPace{g: g.gaps, p: c.offer.Peer}
	go func() {
		final, stats, err := g.transport.Call(ctx, c.offer.Peer, ir, cfg, func(tf *infer.TokenFrame) error {
			pace.arrived(g.clock.Now())
			defer func() { pace.done(g.clock.Now()) }()
			if !s.answered {
				s.answered = true
				traceFirstToken(span, g.clock.Since(start))
			}
			select {
			case <-s.stop:
				return ErrStop
			default:
			}
			select {
			case s.tokens <- tf:
				return nil
			case <-s.stop:
				return ErrStop
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		// Judge the attempt now, before anyone learns it ended: once they
		// do, the request may end and cancel ctx, and a provider's failure
		// must not then pass for an attempt the router cancelled. An error
		// frame is always the provider's own answer.
		cancelled := err != nil && ctx.Err() != nil && !errors.As(err, new(*infer.ErrorFrame))
		o := g.outcome(cancelled, err)
		if o.Kind == breaker.Failure {
			g.watch.failed(c.offer.Peer, err, g.clock.Now()) // before Report, which may open the breaker
			g.suspectIfGone(c.offer.Peer, err)
		}
		br.Report(ticket, o)
		g.metrics.attempt(c.offer.Peer, o.Kind, cancelled || isStop(err))
		if o.Kind == breaker.Failure {
			g.report(s, false, 0, 0, 0)
		}
		endAttempt(span, outcomeName(o, cancelled, err), err)
		s.final, s.stats, s.err = final, stats, err
		close(s.tokens)
	}()
	select {
	case tf, ok := <-s.tokens:
		if ok {
			s.first = tf
			g.observeLatency(c.offer.Peer, g.clock.Since(start))
			return s, nil
		}
		if s.err != nil {
			if errors.Is(s.err, infer.ErrFirstTokenTimeout) {
				// The provider took at least this long: a latency the
				// router saw, so its p95 (and its hedge delay) reflect it.
				g.observeLatency(c.offer.Peer, g.clock.Since(start))
			}
			return nil, classify(s.err)
		}
		g.observeLatency(c.offer.Peer, g.clock.Since(start))
		return s, nil // a final frame with no text
	case <-ctx.Done():
		g.observeCensored(c.offer.Peer, g.clock.Since(start))
		return nil, ctx.Err()
	}
}

// outcome is what an attempt's end says about the provider. A Retry-After
// is honoured whatever the status (a 503 for maintenance carries one too).
// Buyer faults are the buyer's: a request the provider (or the transport's
// own check) refuses as invalid says nothing of the provider, and a busy
// provider is alive and only asks for less traffic.
func (g *Gateway) outcome(cancelled bool, err error) breaker.Outcome {
	var ef *infer.ErrorFrame
	isFrame := errors.As(err, &ef)
	var o breaker.Outcome
	switch {
	case err == nil:
		return breaker.Outcome{Kind: breaker.Success}
	case cancelled || isStop(err):
		return breaker.Outcome{Kind: breaker.Neutral} // we cancelled it (a lost hedge, a deadline, a buyer gone)
	case errors.Is(err, infer.ErrInvalidRequest):
		return breaker.Outcome{Kind: breaker.Neutral} // refused before it was sent
	case isFrame && busy(ef):
		o.Kind = breaker.Throttled
	case isFrame && ef.Status >= 400 && ef.Status < 500:
		o.Kind = breaker.Neutral // the request's fault, or a capability this provider lacks
	default:
		o.Kind = breaker.Failure
	}
	if isFrame && ef.RetryAfterMs > 0 {
		o.NotBefore = g.clock.Now().Add(time.Duration(ef.RetryAfterMs) * time.Millisecond)
	}
	return o
}

// codeBusy is the infer protocol's typed "at capacity" answer (429 with a
// Retry-After); the older providers' code means the same.
const codeBusy = terms.CodeBusy

// busy reports whether a provider's error frame says it is at capacity:
// any 429, or a capacity code whatever its status. A 503 (the stream
// server's "overloaded", an upstream engine's outage) stays a failure: it
// is what a provider going down looks like.
func busy(ef *infer.ErrorFrame) bool {
	return ef.Status == http.StatusTooManyRequests || ef.Code == codeBusy || ef.Code == terms.CodeCapacity
}

// classify marks client errors (400-class other than 408 and 429) as
// permanent: retrying them elsewhere cannot help (context length, content
// policy), and the provider's reason is passed on. A refusal that names
// what this provider cannot do (capabilityCodes) is not permanent: another
// provider may serve the request, nor is a busy one. A request the
// transport's own check refused is the buyer's: permanent too.
func classify(err error) error {
	if errors.Is(err, infer.ErrInvalidRequest) {
		return hedge.Permanent(err)
	}
	var ef *infer.ErrorFrame
	if errors.As(err, &ef) && ef.Status >= 400 && ef.Status < 500 && ef.Status != http.StatusRequestTimeout &&
		!busy(ef) && !terms.CapabilityCodes[ef.Code] {
		return hedge.Permanent(err)
	}
	return err
}

func (g *Gateway) attemptFunc(req *Request, choices map[peer.ID]choice) hedge.AttemptFunc[*stream] {
	return func(ctx context.Context, c strategy.Candidate) (*stream, error) {
		ch := choices[c.Peer]
		ir := g.inferRequest(req, ch, "")
		if req.turn != nil {
			st, err := g.turnFor(ctx, req.turn, ch)
			if err != nil {
				return nil, err
			}
			ir.Session = st
		}
		s, err := g.open(ctx, ch, ir, req.Probe)
		if err == nil && req.Verification == terms.VerifyTEE {
			return g.holdTEE(ctx, s)
		}
		return s, err
	}
}

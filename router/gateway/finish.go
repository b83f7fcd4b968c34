package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// errBuyerGone marks a failure to deliver text to the buyer: the buyer
// left or stopped reading.
var errBuyerGone = errors.New("gateway: buyer stopped reading")

// transportStopGrace is how long the transport waits for a stopped
// provider's final frame (its receipt for what was delivered); stopGrace,
// a little longer, bounds the gateway's own wait for the transport.
const (
	transportStopGrace = 2 * time.Second
	stopGrace          = transportStopGrace + time.Second
)

// errDiverged stops a restarted answer that does not repeat the text the
// buyer already has.
var errDiverged = errors.New("gateway: restarted answer diverges from the text already sent")

// drained is how one stream ended, as far as the buyer is concerned.
type drained struct {
	// own is the text of this stream that reached fwd (a restart's
	// skipped repeat included: the provider's receipt covers it).
	own string
	// rest is text received after the buyer left, never delivered; the
	// provider's receipt may cover it, the bill never does.
	rest string
	// delivered counts the token IDs of s.ids that reached the buyer.
	delivered int
	// gone: the buyer left mid-stream and the provider was stopped.
	gone bool
	// ended: the stream's end was seen (s.final, s.err are set); false
	// only when a departed buyer's provider did not stop within stopGrace.
	ended bool
	// err is the stream's own end (nil for a final frame), errDiverged,
	// or errBuyerGone joined with why delivery failed.
	err error
}

// drain forwards the rest of s to fwd. When the buyer leaves (fwd fails or
// gone closes) the provider is stopped and drain waits for the stream's
// end, so a final frame with a receipt for the delivered part can still
// be billed. The token IDs s carried are kept in s.ids.
func (g *Gateway) drain(s *stream, gone <-chan struct{}, fwd func(Delta) error) drained {
	var d drained
	var grace <-chan time.Time // runs once the buyer has left
	leave := func(err error) {
		d.gone, d.err = true, err
		s.halt()
		grace = g.clock.After(stopGrace)
	}
	var own, rest strings.Builder
	handle := func(tf *infer.TokenFrame) {
		s.ids = append(s.ids, tf.TokenIDs...)
		if d.gone {
			rest.WriteString(tf.Text)
			return
		}
		if err := fwd(Delta{Text: tf.Text, LogProbs: tf.LogProbs}); err != nil {
			rest.WriteString(tf.Text)
			if errors.Is(err, errDiverged) {
				d.err = err
				return
			}
			leave(fmt.Errorf("%w: %w", errBuyerGone, err))
			return
		}
		own.WriteString(tf.Text)
		d.delivered = len(s.ids)
	}
	if s.first != nil {
		handle(s.first)
	}
	for d.err == nil || d.gone {
		var tf *infer.TokenFrame
		ok := true
		select {
		case tf, ok = <-s.tokens:
		case <-gone:
			if !d.gone {
				leave(errBuyerGone)
			}
			gone = nil
			continue
		case <-grace: // the provider did not stop: leave it to the deadline
			d.own, d.rest = own.String(), rest.String()
			return d
		}
		if !ok {
			d.ended = true
			break
		}
		handle(tf)
	}
	if d.err != nil && !d.gone { // diverged: stop the restart, it is not wanted
		s.halt()
	} else if !d.gone {
		d.err = s.err
	}
	d.own, d.rest = own.String(), rest.String()
	return d
}

// finish drains the winner. If its stream breaks mid-answer, the same
// request goes to another provider with the text emitted so far as the
// continuation and the original sampling parameters, once; a provider that
// cannot continue is restarted from the beginning instead, and its output
// is checked against what the buyer already has and the repeat skipped.
// gone closes when the buyer leaves: the provider is stopped and what was
// delivered is billed.
func (g *Gateway) finish(ctx context.Context, gone <-chan struct{}, req *Request, cands []strategy.Candidate, choices map[peer.ID]choice, s *stream, onDelta func(Delta) error) (*Result, error) {
	var sent strings.Builder
	var lps []terms.TokenLogProbs
	fwd := func(d Delta) error {
		if d.Text == "" && len(d.LogProbs) == 0 {
			return nil
		}
		if err := onDelta(d); err != nil {
			return err
		}
		sent.WriteString(d.Text)
		lps = append(lps, d.LogProbs...)
		return nil
	}
	withLogProbs := func(res *Result, err error) (*Result, error) {
		if res != nil {
			res.LogProbs = lps
		}
		return res, err
	}
	d := g.drain(s, gone, fwd)
	if d.err == nil {
		res, err := g.bill(ctx, req, s, d, sent.String(), false)
		if err == nil && res != nil {
			g.throughput.observe(s.choice.offer.Peer, res.CompletionTokens, g.clock.Since(s.start))
		}
		return withLogProbs(res, err)
	}
	if d.gone {
		return nil, g.abandoned(ctx, req, s, d, sent.String(), false)
	}
	broke := fmt.Sprintf("the stream from provider %s broke after %d bytes (%s)", s.choice.offer.Peer, sent.Len(), oneLine(d.err))
	if ctx.Err() != nil {
		return nil, g.cut(ctx, sent.Len(), broke, d.err)
	}
	next, ok := g.successor(cands, choices, s)
	cctx, cspan := g.startContinuation(ctx, s, next, ok, sent.Len())
	if !ok {
		err := interrupted(sent.Len(), broke+" and no other provider can continue it")
		endSpan(cspan, err)
		return nil, err
	}
	g.metrics.continuations.Inc()
	g.log.Warn("stream broke mid-answer; continuing elsewhere", "provider", s.choice.offer.Peer, "successor", next.offer.Peer,
		"sent_bytes", sent.Len(), "err", d.err)
	cont := sent.String()
	cr := g.inferRequest(req, next, cont)
	if s.first == nil || len(s.ids) == 0 || len(s.ids) > infer.MaxMaxTokens {
		cr.ContinuationTokens = nil
	} else {
		cr.ContinuationTokens = s.ids
	}
	s2, err := g.open(cctx, next, cr, req.Probe)
	skip, attempts := "", 1
	var ef *infer.ErrorFrame
	if errors.As(err, &ef) && ef.Code == terms.CodeContinuationUnsupported {
		skip, attempts = cont, 2
		traceRestart(cspan)
		s2, err = g.open(cctx, next, g.inferRequest(req, next, ""), req.Probe)
	}
	if err != nil {
		endSpan(cspan, err)
		return nil, g.cut(ctx, sent.Len(), fmt.Sprintf("%s; continuing it on provider %s failed (%s)", broke, next.offer.Peer, oneLine(err)), err)
	}
	// d2.own is everything the successor produced, a restart's repeat of
	// the text already sent included: its receipt covers exactly that.
	d2 := g.drain(s2, gone, skipPrefix(skip, fwd))
	endSpan(cspan, d2.err)
	if d2.gone {
		return nil, g.abandoned(ctx, req, s2, d2, sent.String(), true)
	}
	if d2.err != nil {
		how := fmt.Sprintf("%s; the continuation on provider %s broke too (%s)", broke, next.offer.Peer, oneLine(d2.err))
		if errors.Is(d2.err, errDiverged) {
			how = fmt.Sprintf("%s; provider %s cannot continue another's text, so it restarted the answer, and the restart differs from the text already sent", broke, next.offer.Peer)
		}
		return nil, g.cut(ctx, sent.Len(), how, d2.err)
	}
	res, err := withLogProbs(g.bill(ctx, req, s2, d2, sent.String(), true))
	if res != nil {
		res.Continued, res.Attempts = true, attempts // Route adds the race's
	}
	return res, err
}

// abandoned bills a stream whose buyer left: the provider was stopped, and
// if its final frame came back in time its receipt is verified and what
// reached the buyer is paid. The buyer's departure is the error either way.
func (g *Gateway) abandoned(ctx context.Context, req *Request, s *stream, d drained, all string, continued bool) error {
	g.metrics.buyersGone.Inc()
	if d.ended && s.final != nil && (s.err == nil || isStop(s.err)) {
		if _, err := g.bill(ctx, req, s, d, all, continued); err != nil {
			g.log.Error("bill an abandoned stream", "provider", s.choice.offer.Peer, "err", err)
		}
	} else {
		var why any = "no end within the grace"
		if d.ended {
			why = s.err
		}
		g.log.Info("buyer left mid-stream; the provider sent no final frame in time, nothing billed",
			"provider", s.choice.offer.Peer, "delivered_bytes", len(all), "stream_end", why)
	}
	return g.cut(ctx, len(all), "the buyer left mid-stream", d.err)
}

// successor picks the best eligible provider other than the broken one.
func (g *Gateway) successor(cands []strategy.Candidate, choices map[peer.ID]choice, broken *stream) (choice, bool) {
	for _, c := range cands {
		if c.Peer == broken.choice.offer.Peer || !g.breakers.Ready(c.Peer) || g.table.Status(c.Peer) != router.StatusUp {
			continue
		}
		return choices[c.Peer], true
	}
	return choice{}, false
}

// skipPrefix drops the first len(prefix) bytes of a restarted answer,
// failing if they differ from what the buyer already received. The
// log-probs of a piece wholly inside the prefix go with it; a piece that
// straddles its end keeps them, for the new text it brings.
func skipPrefix(prefix string, fwd func(Delta) error) func(Delta) error {
	return func(d Delta) error {
		if prefix == "" {
			return fwd(d)
		}
		t := d.Text
		n := min(len(prefix), len(t))
		if t[:n] != prefix[:n] {
			return errDiverged
		}
		prefix, t = prefix[n:], t[n:]
		if t == "" {
			return nil
		}
		return fwd(Delta{Text: t, LogProbs: d.LogProbs})
	}
}

// cut is the error of a stream that could not be completed: the buyer's
// own departure as is, a deadline that passed mid-answer as a deadline miss,
// anything else as an interrupted stream. sent is the text already sent;
// what says, in one line, what failed and at which providers.
func (g *Gateway) cut(ctx context.Context, sent int, what string, err error) error {
	switch {
	case errors.Is(err, errBuyerGone):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		g.metrics.deadlineMisses.Inc()
		return &Error{Status: http.StatusGatewayTimeout, Code: "deadline", Partial: sent > 0,
			Message: fmt.Sprintf("the request's deadline of %s passed mid-answer: %s", g.cfg.Deadline, what)}
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		return interrupted(sent, what)
	}
}

// oneLine is err's text on one line: an error event is one SSE data line,
// and joined errors carry newlines.
func oneLine(err error) string {
	if err == nil {
		return "no error"
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

func interrupted(sent int, msg string) *Error {
	return &Error{Status: http.StatusBadGateway, Code: "stream_interrupted", Message: msg, Partial: sent > 0}
}

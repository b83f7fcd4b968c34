package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// errBuyerGone marks a failure to deliver text to the buyer.
var errBuyerGone = errors.New("gateway: buyer stopped reading")

// errDiverged stops a restarted answer that does not repeat the text the
// buyer already has.
var errDiverged = errors.New("gateway: restarted answer diverges from the text already sent")

// drain forwards the rest of s to fwd and returns the text this stream
// produced and how it ended; the token IDs it carried are kept in s.ids.
func drain(s *stream, fwd func(Delta) error) (string, error) {
	var own strings.Builder
	send := func(tf *infer.TokenFrame) error {
		own.WriteString(tf.Text)
		s.ids = append(s.ids, tf.TokenIDs...)
		if err := fwd(Delta{Text: tf.Text, LogProbs: tf.LogProbs}); err != nil {
			return errors.Join(errBuyerGone, err)
		}
		return nil
	}
	if s.first != nil {
		if err := send(s.first); err != nil {
			return own.String(), err
		}
	}
	for tf := range s.tokens {
		if err := send(tf); err != nil {
			return own.String(), err
		}
	}
	return own.String(), s.err
}

// finish drains the winner. If its stream breaks mid-answer, the same
// request goes to another provider with the text emitted so far as the
// continuation and the original sampling parameters, once; a provider that
// cannot continue is restarted from the beginning instead, and its output
// is checked against what the buyer already has and the repeat skipped.
func (g *Gateway) finish(ctx context.Context, req *Request, cands []strategy.Candidate, choices map[peer.ID]choice, s *stream, onDelta func(Delta) error) (*Result, error) {
	var sent strings.Builder
	var lps []terms.TokenLogProbs
	fwd := func(d Delta) error {
		if d.Text == "" && len(d.LogProbs) == 0 {
			return nil
		}
		sent.WriteString(d.Text)
		lps = append(lps, d.LogProbs...)
		return onDelta(d)
	}
	withLogProbs := func(res *Result, err error) (*Result, error) {
		if res != nil {
			res.LogProbs = lps
		}
		return res, err
	}
	own, err := drain(s, fwd)
	if err == nil {
		return withLogProbs(g.settle(req, s, own, sent.String(), false))
	}
	if errors.Is(err, errBuyerGone) || ctx.Err() != nil {
		return nil, g.cut(ctx, sent.Len(), "", err)
	}
	next, ok := g.successor(cands, choices, s)
	if !ok {
		return nil, interrupted(sent.Len(), "no other provider can continue: "+err.Error())
	}
	g.metrics.continuations.Inc()
	g.log.Warn("stream broke mid-answer; continuing elsewhere", "provider", s.choice.offer.Peer, "successor", next.offer.Peer,
		"sent_bytes", sent.Len(), "err", err)
	cont := sent.String()
	cr := g.inferRequest(req, next, cont)
	if s.first == nil || len(s.ids) == 0 || len(s.ids) > infer.MaxMaxTokens {
		cr.ContinuationTokens = nil
	} else {
		cr.ContinuationTokens = s.ids
	}
	s2, err := g.open(ctx, next, cr, req.Probe)
	skip, attempts := "", 1
	var ef *infer.ErrorFrame
	if errors.As(err, &ef) && ef.Code == terms.CodeContinuationUnsupported {
		skip, attempts = cont, 2
		s2, err = g.open(ctx, next, g.inferRequest(req, next, ""), req.Probe)
	}
	if err != nil {
		return nil, g.cut(ctx, sent.Len(), "continuation failed: ", err)
	}
	// own2 is everything the successor produced, a restart's repeat of the
	// text already sent included: its receipt covers exactly that.
	own2, err := drain(s2, skipPrefix(skip, fwd))
	if err != nil {
		return nil, g.cut(ctx, sent.Len(), "continuation broke too: ", err)
	}
	res, err := withLogProbs(g.settle(req, s2, own2, sent.String(), true))
	if res != nil {
		res.Continued, res.Attempts = true, attempts // Route adds the race's
	}
	return res, err
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
// anything else as an interrupted stream. sent is the text already sent.
func (g *Gateway) cut(ctx context.Context, sent int, msg string, err error) error {
	switch {
	case errors.Is(err, errBuyerGone) && !errors.Is(err, errDiverged):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		g.metrics.deadlineMisses.Inc()
		return &Error{Status: http.StatusGatewayTimeout, Code: "deadline", Partial: sent > 0,
			Message: fmt.Sprintf("the request's deadline of %s passed mid-answer", g.cfg.Deadline)}
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		return interrupted(sent, msg+err.Error())
	}
}

func interrupted(sent int, msg string) *Error {
	return &Error{Status: http.StatusBadGateway, Code: "stream_interrupted", Message: msg, Partial: sent > 0}
}

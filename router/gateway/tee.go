package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// ErrTEESigner refuses a `tee` answer whose receipt is not signed by the
// session key the provider's attestation binds: the key that signed it was
// not shown to live in the attested guest, so neither was the answer.
var ErrTEESigner = errors.New("gateway: tee: receipt not signed by the attested session key")

// holdTEE reads a `tee` attempt to its end before anything reaches the
// buyer, and lets it win only if its receipt verifies and is signed by the
// session key the provider's verified attestation binds. Checked at the end
// because the receipt comes last: a refused answer has then reached no one,
// is not billed, counts against the provider, and the race goes on to the
// next provider. The price is the stream: a `tee` answer reaches the buyer
// in one piece once it is verified.
func (g *Gateway) holdTEE(ctx context.Context, s *stream) (*stream, error) {
	var frames []*infer.TokenFrame
	for done := false; !done; {
		select {
		case tf, ok := <-s.tokens:
			if !ok {
				done = true
				break
			}
			frames = append(frames, tf)
		case <-ctx.Done():
			s.halt()
			return nil, ctx.Err()
		}
	}
	if s.err != nil {
		return nil, classify(s.err)
	}
	if s.final == nil {
		return nil, errors.New("gateway: tee: provider ended without a final frame")
	}
	if err := g.checkTEESigner(s); err != nil {
		g.metrics.badReceipts.Inc()
		g.penalize(s.choice.offer.Peer, err)
		g.keepReceipt(s, false, err.Error())
		g.report(s, false, 0, 0, 0)
		g.log.Warn("tee answer refused; not paying, trying the next provider", "provider", s.choice.offer.Peer, "err", err)
		return nil, err
	}
	held := &stream{choice: s.choice, req: s.req, first: s.first, stop: s.stop, start: s.start, probe: s.probe,
		tokens: make(chan *infer.TokenFrame, len(frames)), final: s.final, stats: s.stats}
	for _, tf := range frames {
		held.tokens <- tf
	}
	close(held.tokens)
	return held, nil
}

// checkTEESigner verifies the final frame's receipt up to the provider's
// machine and compares the certificate's session key with the attested one.
func (g *Gateway) checkTEESigner(s *stream) error {
	o := s.choice.offer
	if o.Attested == nil || len(o.Attested.SessionPub) == 0 {
		return fmt.Errorf("%w: provider %s has no verified attestation", ErrTEESigner, o.Peer)
	}
	if _, err := receipt.VerifyCached(g.certs, s.final.Receipt, o.Machine, g.clock.Now()); err != nil {
		return fmt.Errorf("%w: %w", ErrTEESigner, err)
	}
	env, err := identity.UnmarshalEnvelope(s.final.Receipt, receipt.MaxEnvelopeSize)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTEESigner, err)
	}
	if !bytes.Equal(env.Cert.SessionPub, o.Attested.SessionPub) {
		return fmt.Errorf("%w: provider %s signed with another session key than its attestation binds (rotated since its announcement?)",
			ErrTEESigner, o.Peer)
	}
	return nil
}

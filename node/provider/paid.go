package provider

import (
	"context"
	"errors"
	"math/bits"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

var errOverflow = errors.New("provider: request size overflows")

// paidCall is an admitted call that its settler pays for (nil: unpaid);
// owing is set once its final frame is handed over to be written.
type paidCall struct {
	g     grant
	owing bool
}

// endPayment runs as the handler returns: a call whose final frame is on
// its way keeps its reservation until the frame is written (then it is
// owed) or the reservation lapses; any other call owes nothing.
func (s *inferServer) endPayment(pc *paidCall) {
	c := s.credit.Load()
	if pc == nil || c == nil {
		return
	}
	if pc.owing {
		c.finishing(pc.g)
	} else {
		c.release(pc.g)
	}
}

// admitPayment decides who pays for req. Without credit control (no
// chain) every call is served as before. On a chain a call carries a pay
// authorization credit control admits, or comes from a trusted caller
// (served unpaid, the operator's choice); anything else is refused with
// 402 before an engine slot is taken.
func (s *inferServer) admitPayment(ctx context.Context, from peer.ID, req *infer.Request, offer gossip.ModelOffer) (*paidCall, error) {
	c := s.credit.Load()
	if c == nil {
		return nil, nil
	}
	if req.Pay == nil {
		if s.trusted[from] {
			return nil, nil
		}
		return nil, payRefusal(terms.CodePaymentRequired, "this provider serves paid calls: the request names no payer escrow and settler")
	}
	worst, err := worstPrice(offer, req)
	if err != nil {
		return nil, errFrame(http.StatusBadRequest, terms.CodeBadRequest, "%v", err)
	}
	g, ef := c.admit(ctx, from, req, worst)
	if ef != nil {
		return nil, ef
	}
	return &paidCall{g: g}, nil
}

// worstPrice bounds what a gateway can be billed for req: a gateway caps
// input tokens by the bytes it sent, output by max_tokens, and the
// expert-tokens of a MoE model by its shape × both.
func worstPrice(offer gossip.ModelOffer, req *infer.Request) (uint64, error) {
	in := uint64(len(req.Prompt) + len(req.Continuation))
	for _, m := range req.Messages {
		var carry uint64
		if in, carry = bits.Add64(in, uint64(m.Size()+len(m.Role)), 0); carry != 0 {
			return 0, errOverflow
		}
	}
	u := pricing.Units{InputTokens: in, OutputTokens: uint64(max(req.Sampling.MaxTokens, 0))}
	tokens, carry := bits.Add64(u.InputTokens, u.OutputTokens, 0)
	hi, experts := bits.Mul64(offer.MoE.ExpertsPerToken(), tokens)
	if carry != 0 || hi != 0 {
		return 0, errOverflow
	}
	u.ExpertTokens = experts
	bd, err := pricing.Price(offer.RateCard, u, terms.VerifyNone, pricing.Surcharges{})
	if err != nil {
		return 0, err
	}
	return bd.Total, nil
}

// owe notes, once the final frame is written, that the call's settler
// owes a record for it, at the provider's own price (ownPrice), the one
// its receipt signs.
func (s *inferServer) owe(pc *paidCall, req *infer.Request, offer gossip.ModelOffer, f *infer.FinalFrame, cached int, exact bool) {
	if pc == nil || f == nil {
		return
	}
	prompt := max(f.PromptTokens, 0)
	cached = min(max(cached, 0), prompt)
	u := pricing.Units{InputTokens: uint64(prompt - cached), CachedTokens: uint64(cached), OutputTokens: uint64(max(f.CompletionTokens, 0))}
	u.ExpertTokens, _ = infer.ExpertTokensOf(f.Experts) // checked by the frame's own rules
	price := ownPrice(offer, u, exact, f.FinishReason, req.Continuation)
	if price == 0 {
		// A free call owes nothing: no record can pay zero (the settler's
		// outbox refuses to sign one), so counting it would hold an
		// honest settler to a debt nothing can clear.
		return
	}
	input := receipt.InputCommitment(req.ModelID, req.Chat, req.Messages, req.Prompt, req.Continuation, req.Sampling)
	rd := terms.Hash32(receipt.RequestDigest(req.Nonce, input, req.ModelID))
	c := s.credit.Load()
	rh := terms.Hash32(receipt.ReceiptHash(f.Receipt))
	pc.owing = true
	f.Written = func() { c.served(pc.g, rd, price, rh) }
}

// ownPrice is the least a record for a call may pay this provider: its
// rate card on the units its receipt claims (no surcharge: those are the
// gateway's to add), or only the per-call minimum where the gateway may
// fairly bill less than the claim (an upstream's count, a stopped stream,
// a continuation whose earlier text the gateway does not count as input).
// The receipt signs it, so the chain refuses a record below it; a rate
// card that overflows prices the call at 0 (no floor).
func ownPrice(offer gossip.ModelOffer, u pricing.Units, exact bool, finish, continuation string) uint64 {
	if !exact || finish == FinishStopped || continuation != "" {
		u = pricing.Units{}
	}
	bd, err := pricing.Price(offer.RateCard, u, terms.VerifyNone, pricing.Surcharges{})
	if err != nil {
		return 0
	}
	return bd.Total
}

package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// bill verifies the serving provider's receipt against what the gateway
// itself sent and received, bills each dimension capped by the wire, and
// records the payment. d is how this provider's stream ended; all is what
// the buyer received. A receipt that fails is not paid and counts against
// the provider; the buyer still gets the answer, marked unverified.
//
// A stream the buyer left (d.gone) is billed for what reached the buyer:
// the provider was stopped and may sign for text the gateway never saw, so
// its output hash cannot be checked, only everything else; the output is
// capped by the delivered text (and its token IDs) as well as the wire.
func (g *Gateway) bill(ctx context.Context, req *Request, s *stream, d drained, all string, continued bool) (*Result, error) {
	o := s.choice.offer
	res := &Result{
		Text: all, Model: o.Model.Name,
		Provider: Provider{Name: shortPeer(o.Peer), PeerID: o.Peer.String(),
			MachineID: o.Machine.String(), KeyBackend: o.Backend, Region: o.Region},
	}
	f := s.final
	if f == nil {
		return nil, interrupted(len(all), "provider ended without a final frame")
	}
	res.FinishReason, res.PromptTokens, res.CompletionTokens = f.FinishReason, f.PromptTokens, f.CompletionTokens
	info := &ReceiptInfo{Envelope: f.Receipt}
	res.Receipt = info
	input := receipt.InputCommitment(s.req.ModelID, s.req.Chat, s.req.Messages, s.req.Prompt, s.req.Continuation, s.req.Sampling)
	obs := receipt.Observed{
		Nonce: s.req.Nonce, ModelID: s.req.ModelID, MachineID: o.Machine, InputCommitment: input, OutputText: d.own + d.rest,
		BytesSent: s.stats.BytesSent, BytesReceived: s.stats.BytesReceived, MaxTokens: s.req.Sampling.MaxTokens,
		ExactOutputTokens: -1, ExactInputTokens: -1,
	}
	_, rspan := g.startSpan(ctx, SpanReceipt)
	traceProvider(rspan, o.Peer)
	r, err := receipt.VerifyCached(g.certs, f.Receipt, o.Machine, g.clock.Now())
	if err == nil {
		err = receipt.Check(r, obs)
		if d.gone {
			err = withoutOutputMismatch(err)
		}
	}
	if err == nil {
		err = checkCommitment(req.Verification, r, f.Commitment, s.ids, d.gone)
	}
	endReceipt(rspan, err)
	// What is billed: the delivered text and IDs only.
	obs.OutputText = d.own
	g.exactCounts(s, s.ids[:d.delivered], d.own, &obs)
	info.Commitment, info.TokenIDs = f.Commitment, s.ids
	if err != nil {
		info.Problem = err.Error()
		g.metrics.badReceipts.Inc()
		g.penalize(o.Peer, err)
		g.keepReceipt(s, false, info.Problem)
		g.report(s, false, 0, 0, 0)
		g.log.Warn("receipt refused; not paying", "provider", o.Peer, "err", err)
		return res, nil
	}
	info.Verified, info.Receipt = true, ViewReceipt(r)
	_, bspan := g.startSpan(ctx, SpanBilling)
	units, capRep := receipt.Cap(r.Units, obs)
	var expertsCapped bool
	units.ExpertTokens, expertsCapped = capExperts(r.Units.ExpertTokens, g.moeShape(s.req.ModelID, o), units, continuationTokens(s.req))
	info.Capped = cappedDimensions(capRep, units)
	if expertsCapped {
		info.Capped = append(info.Capped, CappedExperts)
		g.metrics.expertsCapped.Inc()
		g.log.Warn("provider claimed more expert-tokens than its model's MoE shape allows; billing the bound", "provider", o.Peer,
			"claimed", r.Units.ExpertTokens, "billed", units.ExpertTokens)
	}
	res.Experts = g.expertsOf(o.Peer, f.Experts, r)
	if capRep.InputExact {
		info.Counted = append(info.Counted, "input")
	}
	if capRep.OutputExact {
		info.Counted = append(info.Counted, "output")
	}
	if capRep.OutputExact && units.OutputTokens < r.Units.OutputTokens || capRep.InputExact && units.InputTokens+units.CachedTokens < r.Units.InputTokens+r.Units.CachedTokens {
		g.log.Warn("provider claimed more tokens than it served; billing the gateway's count", "provider", o.Peer,
			"claimed", r.Units, "billed", units)
	}
	bd, err := pricing.Price(o.Model.RateCard, units, req.Verification, s.choice.sur)
	endBilling(bspan, units, info, bd.Total, err)
	if err != nil {
		return res, fmt.Errorf("gateway: price %s: %w", o.Peer, err)
	}
	if r.Paid() && bd.Total < r.Price {
		// The chain settles no record below the price the receipt signs
		// (CodeUnderpriced): the provider claimed more than this gateway
		// counted, and is paid nothing for the call.
		g.log.Warn("the receipt's price is above what this gateway bills; the chain will refuse the record", "provider", o.Peer,
			"receipt_price", r.Price, "billed", bd.Total)
	}
	rd := receipt.RequestDigest(s.req.Nonce, input, s.req.ModelID)
	rh := receipt.ReceiptHash(f.Receipt)
	rec := &receipt.Bill{
		RequestDigest: rd[:], QuoteDigest: s.choice.quote.Digest[:], Payer: req.Payer,
		ProviderPeer: []byte(o.Peer), MachineID: machineBytes(o.Machine), ReceiptHash: rh[:],
		Units: units, Breakdown: bd, Price: bd.Total, TimeMs: g.clock.Now().UnixMilli(),
	}
	_, pspan := g.startSpan(ctx, SpanPaymentRecord)
	if g.payments != nil && o.Unregistered {
		// The chain cannot pay a machine nobody registered: the buyer opted
		// in to an unregistered provider, which serves it unpaid.
		g.keepReceipt(s, true, "unregistered provider: no payment record")
		g.receiptDurable(ctx)
		g.report(s, true, 0, units.InputTokens, units.OutputTokens)
		endPayment(pspan, PaymentUnregistered, false, nil)
		return res, nil
	}
	if g.payments != nil && bd.Total == 0 {
		// A free call: nothing to pay, and no record can pay zero.
		g.keepReceipt(s, true, "free call: no payment record")
		g.receiptDurable(ctx)
		g.report(s, true, 0, units.InputTokens, units.OutputTokens)
		endPayment(pspan, PaymentFree, false, nil)
		return res, nil
	}
	if g.payments != nil {
		// The receipt is written first and made durable behind the
		// record's own fsync: a gateway killed just after answering kept
		// the signed record but lost the receipt (the soak's violation).
		g.keepReceipt(s, true, "")
		g.keepEvidence(req, s, r, rd)
		signed, err := g.signRecord(req.Payer, s, rd, rh, units, bd.Total)
		if err != nil {
			g.metrics.unsigned.Inc()
			g.log.Error("sign payment record; the provider is owed this call", "payer", req.Payer, "provider", o.Peer,
				"request", hex.EncodeToString(rd[:8]), "price", bd.Total, "err", err)
			g.receiptDurable(ctx)
			endPayment(pspan, PaymentChain, false, err)
			return res, nil
		}
		g.receiptDurable(ctx)
		res.Signed = signed
		endPayment(pspan, PaymentChain, true, nil)
	} else if g.ledger != nil {
		if err := g.ledger.SettleWithReceipt(rec, s.req.Nonce, f.Receipt, g.receiptMeta(s, true, "")); err != nil {
			g.log.Error("record payment", "payer", req.Payer, "request", hex.EncodeToString(rd[:8]), "err", err)
			endPayment(pspan, PaymentOffChain, false, err)
			return res, nil
		}
		endPayment(pspan, PaymentOffChain, true, nil)
	} else {
		endPayment(pspan, PaymentOffChain, false, nil) // no ledger: nothing keeps it (a test mode)
	}
	g.budgetBilled(ctx, rd[:], o, bd.Total)
	g.metrics.paid(o.Peer, bd.Total)
	g.report(s, true, bd.Total, units.InputTokens, units.OutputTokens)
	res.Payment = rec
	return res, nil
}

// withoutOutputMismatch drops an output-hash mismatch from Check's joined
// errors: a stopped provider signs for all it generated, which may run past
// what the gateway received.
func withoutOutputMismatch(err error) error {
	// Check's own join, at the top: errors.As would reach into a join
	// wrapped deeper and drop the wrapping message with the mismatch.
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if errors.Is(err, receipt.ErrOutputMismatch) {
			return nil
		}
		return err
	}
	var keep []error
	for _, e := range j.Unwrap() {
		if !errors.Is(e, receipt.ErrOutputMismatch) {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

func (g *Gateway) keepReceipt(s *stream, ok bool, problem string) {
	if g.ledger == nil {
		return
	}
	if err := g.ledger.PutReceipt(s.req.Nonce, s.final.Receipt, g.receiptMeta(s, ok, problem)); err != nil {
		g.log.Error("store receipt", "err", err)
	}
}

// receiptDurable waits until the receipts kept so far are on disk, so no
// buyer holds an answer whose receipt a crash of this node could lose.
func (g *Gateway) receiptDurable(ctx context.Context) {
	if g.ledger == nil {
		return
	}
	if err := g.ledger.WaitDurable(context.WithoutCancel(ctx)); err != nil {
		g.log.Error("store receipt: not durable", "err", err)
	}
}

func (g *Gateway) receiptMeta(s *stream, ok bool, problem string) store.ReceiptMeta {
	return store.ReceiptMeta{Verified: ok, Reason: problem, Provider: s.choice.offer.Peer.String(),
		Model: s.choice.offer.Model.Name, TimeMs: g.clock.Now().UnixMilli()}
}

// checkCommitment: a request that asked for logit commitments is paid
// only if the final frame carries proofs whose hash the receipt signs,
// and the receipt signs the token IDs the gateway received, one proof step
// each (the evidence a dispute needs: the chain refuses any other, so a
// receipt binding other IDs, none, or proofs of another length could
// never be disputed). A buyer that left may not have seen every token the
// provider sent, so then only the binding's presence is checked, as the
// output hash is not.
func checkCommitment(level terms.Verification, r *receipt.Receipt, proofs []byte, ids []int, gone bool) error {
	if level != terms.VerifyOptimistic {
		return nil
	}
	ps, err := commit.Decode(proofs)
	if err != nil {
		return fmt.Errorf("gateway: commitment: %w", err)
	}
	if h := commit.Hash(ps); !bytes.Equal(h[:], r.CommitmentHash) {
		return fmt.Errorf("gateway: commitment proofs hash %x, receipt signs %x", h, r.CommitmentHash)
	}
	if len(r.TokensHash) == 0 {
		return errors.New("gateway: commitment: the receipt signs no token IDs")
	}
	if gone {
		return nil
	}
	u, ok := receipt.TokenIDs(ids)
	if !ok {
		return errors.New("gateway: commitment: a token ID received is out of range")
	}
	if h := receipt.TokensHash(u); !bytes.Equal(h[:], r.TokensHash) {
		return fmt.Errorf("gateway: commitment: the %d token IDs received hash to %x, receipt signs %x", len(ids), h, r.TokensHash)
	}
	steps := 0
	for _, p := range ps {
		steps += p.Steps()
	}
	if steps != len(ids) {
		return fmt.Errorf("gateway: commitment: proofs cover %d decode steps, %d tokens received", steps, len(ids))
	}
	return nil
}

// penalize counts a failure against p outside an attempt (a receipt that
// did not verify after the stream itself succeeded).
func (g *Gateway) penalize(p peer.ID, why error) {
	g.watch.failed(p, fmt.Errorf("receipt refused: %w", why), g.clock.Now())
	br := g.breakers.Get(p)
	if t, err := br.Allow(); err == nil {
		br.Report(t, breaker.Outcome{Kind: breaker.Failure})
	}
}

// cappedDimensions names what billed a dimension below the claim; an
// exact count is named only when it came out lower.
func cappedDimensions(r receipt.CapReport, billed pricing.Units) []string {
	var out []string
	for _, d := range []struct {
		name string
		on   bool
	}{
		{"output:exact_count", r.OutputExact && billed.OutputTokens < r.Claimed.OutputTokens},
		{"output:max_tokens", r.OutputMaxTokens}, {"output:text_bytes", r.OutputText}, {"output:wire_bytes", r.OutputWire},
		{"input:exact_count", r.InputExact && billed.InputTokens+billed.CachedTokens < r.Claimed.InputTokens+r.Claimed.CachedTokens},
		{"input:wire_bytes", r.InputWire},
	} {
		if d.on {
			out = append(out, d.name)
		}
	}
	return out
}

func machineBytes(m identity.MachineID) []byte { return append([]byte(nil), m[:]...) }

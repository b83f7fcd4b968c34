package gateway

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// The attributes of each step's span, set only when the span records.

// traceCandidates: how many providers were quoted and ranked, and the best.
func traceCandidates(span trace.Span, cands []strategy.Candidate) {
	if !span.IsRecording() || len(cands) == 0 {
		return
	}
	span.SetAttributes(AttrCandidates.Int(len(cands)), AttrBestPeer.String(cands[0].Peer.String()),
		AttrBestPrice.Int64(clampInt64(cands[0].Price)))
}

// traceRace puts what the race did on the root span: the attempts are its
// children, each labelled with its round and whether it was the hedge.
func traceRace(span trace.Span, rep hedge.Report) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(AttrHedged.Bool(rep.HedgesDispatched > 0), AttrHedgeWon.Bool(rep.HedgeWon),
		AttrFailovers.Int(rep.Failovers))
}

// traceFirstToken marks an attempt's time to its first token.
func traceFirstToken(span trace.Span, ttft time.Duration) {
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(ttft.Seconds()))
	}
}

// startContinuation opens the span of a broken stream's continuation: from
// the broken provider to its successor (none when ok is false), with what
// the buyer already had. The successor's attempts are its children.
func (g *Gateway) startContinuation(ctx context.Context, broken *stream, next choice, ok bool, sent int) (context.Context, trace.Span) {
	ctx, span := g.startSpan(ctx, SpanContinuation)
	if span.IsRecording() {
		to := ""
		if ok {
			to = next.offer.Peer.String()
		}
		span.SetAttributes(AttrContFrom.String(broken.choice.offer.Peer.String()), AttrContTo.String(to),
			AttrContSentBytes.Int(sent), AttrContTokens.Int(len(broken.ids)), AttrContRestarted.Bool(false))
	}
	return ctx, span
}

// traceRestart: the successor could not continue and restarts the answer.
func traceRestart(span trace.Span) {
	if span.IsRecording() {
		span.SetAttributes(AttrContRestarted.Bool(true))
	}
}

// traceProvider names the provider a step is about.
func traceProvider(span trace.Span, p peer.ID) {
	if span.IsRecording() {
		span.SetAttributes(AttrProviderPeer.String(p.String()))
	}
}

// endReceipt closes the receipt verification: verified, or why not.
func endReceipt(span trace.Span, err error) {
	if span.IsRecording() {
		span.SetAttributes(AttrVerified.Bool(err == nil))
		if err != nil {
			span.SetAttributes(AttrProblem.String(err.Error()))
		}
	}
	endSpan(span, err)
}

// endBilling closes the billing step: the units billed (capped by the
// wire), what capped or counted them, and the price.
func endBilling(span trace.Span, units pricing.Units, info *ReceiptInfo, price uint64, err error) {
	if span.IsRecording() {
		span.SetAttributes(AttrBilledInput.Int64(clampInt64(units.InputTokens)), AttrBilledOutput.Int64(clampInt64(units.OutputTokens)),
			AttrBilledCached.Int64(clampInt64(units.CachedTokens)), AttrCapped.StringSlice(info.Capped),
			AttrCounted.StringSlice(info.Counted))
		if err == nil {
			span.SetAttributes(AttrCost.Int64(clampInt64(price)))
		}
	}
	endSpan(span, err)
}

// endPayment closes the payment record step: how the call is paid and
// whether its record was signed and kept. On a chain, delivering the record
// to the provider and settling it happen later in the settle outbox,
// outside the request and its trace.
func endPayment(span trace.Span, mode string, kept bool, err error) {
	if span.IsRecording() {
		span.SetAttributes(AttrPayment.String(mode), AttrPaymentKept.Bool(kept))
	}
	endSpan(span, err)
}

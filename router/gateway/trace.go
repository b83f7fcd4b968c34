package gateway

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/hedge"
)

// Every routed request is one trace: a root span named by the GenAI
// semantic conventions ("chat {model}"), and one child span per step. The
// tracer is otel's no-op one unless Deps.Tracer is set, and attributes are
// built only for a span that records, so tracing off costs next to nothing.

// TracerName is the instrumentation scope of the gateway's spans.
const TracerName = "github.com/tenzrod/tenzrod/router/gateway"

// Span names, below the root.
const (
	SpanIntake        = "gateway.intake"
	SpanQuote         = "gateway.quote_rank"
	SpanAttempt       = "gateway.attempt"
	SpanContinuation  = "gateway.continuation"
	SpanReceipt       = "gateway.receipt"
	SpanBilling       = "gateway.billing"
	SpanPaymentRecord = "gateway.payment_record"
)

// Attributes of the gateway's own (the GenAI ones come from semconv).
// Money is integer micro-units.
const (
	AttrProviderPeer    = attribute.Key("tenzro.provider.peer")
	AttrProviderMachine = attribute.Key("tenzro.provider.machine")
	AttrOutcome         = attribute.Key("tenzro.attempt.outcome")
	AttrHedge           = attribute.Key("tenzro.attempt.hedge")
	AttrRound           = attribute.Key("tenzro.attempt.round")
	AttrStrategy        = attribute.Key("tenzro.strategy")
	AttrVerification    = attribute.Key("tenzro.verification")
	AttrCandidates      = attribute.Key("tenzro.candidates")
	AttrBestPeer        = attribute.Key("tenzro.best.peer")
	AttrBestPrice       = attribute.Key("tenzro.best.price_micro")
	AttrAttempts        = attribute.Key("tenzro.attempts")
	AttrHedged          = attribute.Key("tenzro.hedge.dispatched")
	AttrHedgeWon        = attribute.Key("tenzro.hedge.won")
	AttrFailovers       = attribute.Key("tenzro.failovers")
	AttrContinued       = attribute.Key("tenzro.continued")
	AttrContFrom        = attribute.Key("tenzro.continuation.from")
	AttrContTo          = attribute.Key("tenzro.continuation.to")
	AttrContSentBytes   = attribute.Key("tenzro.continuation.sent_bytes")
	AttrContTokens      = attribute.Key("tenzro.continuation.tokens")
	AttrContRestarted   = attribute.Key("tenzro.continuation.restarted")
	AttrVerified        = attribute.Key("tenzro.receipt.verified")
	AttrProblem         = attribute.Key("tenzro.receipt.problem")
	AttrBilledInput     = attribute.Key("tenzro.billed.input_tokens")
	AttrBilledOutput    = attribute.Key("tenzro.billed.output_tokens")
	AttrBilledCached    = attribute.Key("tenzro.billed.cached_tokens")
	AttrCapped          = attribute.Key("tenzro.billed.capped")
	AttrCounted         = attribute.Key("tenzro.billed.counted")
	AttrCost            = attribute.Key("tenzro.cost.micro")
	AttrPayment         = attribute.Key("tenzro.payment.mode")
	AttrPaymentKept     = attribute.Key("tenzro.payment.kept")
)

// Attempt outcomes (AttrOutcome).
const (
	OutcomeOK          = "ok"
	OutcomeFailed      = "failed"
	OutcomeThrottled   = "throttled"
	OutcomeRefused     = "refused"   // a 400-class answer or the transport's own check
	OutcomeCancelled   = "cancelled" // a lost hedge, a deadline, a buyer gone (the provider stopped)
	OutcomeBreakerOpen = "breaker_open"
)

// Payment modes (AttrPayment): the chain's record signed as settler and
// kept in the outbox for delivery (delivery and settlement happen later,
// outside the request), the off-chain ledger's settlement, or none.
const (
	PaymentChain        = "chain"
	PaymentOffChain     = "off_chain"
	PaymentUnregistered = "unregistered"
	PaymentFree         = "free"
)

// noSpan is the span of an untraced request: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// startRoute opens the request's root span, a child of whatever span ctx
// carries (an incoming traceparent, once the HTTP layer extracts one).
func (g *Gateway) startRoute(ctx context.Context, req *Request) (context.Context, trace.Span) {
	if !g.traced {
		return ctx, noSpan
	}
	op := semconv.GenAIOperationNameChat
	if !req.Chat {
		op = semconv.GenAIOperationNameTextCompletion
	}
	ctx, span := g.tracer.Start(ctx, op.Value.AsString()+" "+req.Model, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(op, semconv.GenAIProviderNameKey.String("tenzro"), semconv.GenAIRequestModel(req.Model),
			semconv.GenAIRequestMaxTokens(req.Sampling.MaxTokens), semconv.GenAIRequestStream(req.Stream),
			AttrStrategy.String(req.Strategy), AttrVerification.String(string(req.Verification)))
	}
	return ctx, span
}

// endRoute closes the root span with what the buyer got.
func endRoute(span trace.Span, res *Result, err error) {
	if span.IsRecording() && res != nil {
		var cost uint64
		switch {
		case res.Signed != nil:
			cost = res.Signed.Price
		case res.Payment != nil:
			cost = res.Payment.Price
		}
		span.SetAttributes(semconv.GenAIResponseModel(res.Model), semconv.GenAIUsageInputTokens(res.PromptTokens),
			semconv.GenAIUsageOutputTokens(res.CompletionTokens), semconv.GenAIResponseFinishReasons(res.FinishReason),
			AttrProviderPeer.String(res.Provider.PeerID), AttrCost.Int64(clampInt64(cost)),
			AttrAttempts.Int(res.Attempts), AttrContinued.Bool(res.Continued))
	}
	endSpan(span, err)
}

// startSpan opens an internal step of the request. Without a tracer it
// costs nothing, not even the no-op tracer's context.
func (g *Gateway) startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	if !g.traced {
		return ctx, noSpan
	}
	return g.tracer.Start(ctx, name)
}

// endSpan ends span, an error setting its status and error.type.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	}
	span.End()
}

// errorType is the error.type of err: the buyer-facing code when it has one.
func errorType(err error) string {
	var ge *Error
	switch {
	case errors.As(err, &ge):
		return ge.Code
	case errors.Is(err, errBuyerGone):
		return "buyer_gone"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	default:
		return "_OTHER"
	}
}

// startAttempt opens the span of one call to a provider; it ends when the
// call does (endAttempt), the winner's whole stream included.
func (g *Gateway) startAttempt(ctx context.Context, c choice) (context.Context, trace.Span) {
	if !g.traced {
		return ctx, noSpan
	}
	ctx, span := g.tracer.Start(ctx, SpanAttempt, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		d, _ := hedge.DispatchOf(ctx)
		span.SetAttributes(AttrProviderPeer.String(c.offer.Peer.String()), AttrProviderMachine.String(c.offer.Machine.String()),
			semconv.GenAIRequestModel(c.offer.Model.Name), AttrHedge.Bool(d.Hedge), AttrRound.Int(d.Round))
	}
	return ctx, span
}

// endAttempt closes an attempt's span with its outcome; only a provider's
// fault or refusal is an error status, not an attempt the router cancelled.
func endAttempt(span trace.Span, outcome string, err error) {
	if span.IsRecording() {
		span.SetAttributes(AttrOutcome.String(outcome))
	}
	if outcome == OutcomeCancelled || outcome == OutcomeOK {
		err = nil
	}
	endSpan(span, err)
}

// outcomeName names what the breaker was told of an attempt.
func outcomeName(o breaker.Outcome, cancelled bool, err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case cancelled || isStop(err):
		return OutcomeCancelled
	case o.Kind == breaker.Throttled:
		return OutcomeThrottled
	case o.Kind == breaker.Neutral:
		return OutcomeRefused
	default:
		return OutcomeFailed
	}
}

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

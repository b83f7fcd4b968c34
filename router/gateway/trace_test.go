package gateway

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// traced rebuilds m's gateway with a tracer whose spans go to an in-memory
// exporter, synchronously, so they are all there once the bubble is idle.
func traced(t testing.TB, m *market) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	withTracer(t, m, testConfig(), sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	return exp
}

// withTracer replaces m's gateway by one with cfg and tp.
func withTracer(t testing.TB, m *market, cfg Config, tp trace.TracerProvider) {
	t.Helper()
	gw, err := New(cfg, Deps{Transport: m.tr, Table: m.table, Ledger: m.st, Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	m.gw = gw
}

// spanTree is one request's finished spans.
type spanTree struct {
	t     *testing.T
	spans tracetest.SpanStubs
}

// tree waits for every attempt to end (a lost hedge ends after the answer)
// and returns the spans, checking they form one trace.
func tree(t *testing.T, exp *tracetest.InMemoryExporter) spanTree {
	t.Helper()
	synctest.Wait()
	st := spanTree{t: t, spans: exp.GetSpans()}
	if len(st.spans) == 0 {
		t.Fatal("no spans")
	}
	for _, s := range st.spans {
		if s.SpanContext.TraceID() != st.spans[0].SpanContext.TraceID() {
			t.Fatalf("span %s is in trace %s, %s in %s", s.Name, s.SpanContext.TraceID(), st.spans[0].Name, st.spans[0].SpanContext.TraceID())
		}
		if s.EndTime.IsZero() {
			t.Fatalf("span %s never ended", s.Name)
		}
	}
	return st
}

// root is the one span without a parent.
func (st spanTree) root() tracetest.SpanStub {
	st.t.Helper()
	var roots []tracetest.SpanStub
	for _, s := range st.spans {
		if !s.Parent.IsValid() {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		st.t.Fatalf("%d root spans", len(roots))
	}
	return roots[0]
}

// children are parent's child spans by start time, then end time, then
// the order they ended in (the exporter's: virtual time often ties).
func (st spanTree) children(parent tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range st.spans {
		if s.Parent.SpanID() == parent.SpanContext.SpanID() {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartTime.Equal(out[j].StartTime) {
			return out[i].StartTime.Before(out[j].StartTime)
		}
		return out[i].EndTime.Before(out[j].EndTime)
	})
	return out
}

// expect checks the children's names, in order, and returns them.
func (st spanTree) expect(parent tracetest.SpanStub, names ...string) []tracetest.SpanStub {
	st.t.Helper()
	cs := st.children(parent)
	got := make([]string, len(cs))
	for i, c := range cs {
		got[i] = c.Name
	}
	if !slices.Equal(got, names) {
		st.t.Fatalf("children of %s: %q, want %q", parent.Name, got, names)
	}
	return cs
}

// has checks that span carries each attribute with exactly that value.
func has(t *testing.T, s tracetest.SpanStub, want ...attribute.KeyValue) {
	t.Helper()
	for _, w := range want {
		i := slices.IndexFunc(s.Attributes, func(a attribute.KeyValue) bool { return a.Key == w.Key })
		if i < 0 {
			t.Fatalf("span %s lacks %s (has %v)", s.Name, w.Key, s.Attributes)
		}
		if got := s.Attributes[i].Value; got != w.Value {
			t.Fatalf("span %s: %s = %s, want %s", s.Name, w.Key, got.String(), w.Value.String())
		}
	}
}

func status(t *testing.T, s tracetest.SpanStub, want codes.Code) {
	t.Helper()
	if s.Status.Code != want {
		t.Fatalf("span %s status %v (%q), want %v", s.Name, s.Status.Code, s.Status.Description, want)
	}
}

// billed checks the receipt, billing and payment spans of a paid call.
func billed(t *testing.T, res *Result, receiptSpan, billing, payment tracetest.SpanStub) {
	t.Helper()
	has(t, receiptSpan, AttrVerified.Bool(true), AttrProviderPeer.String(res.Provider.PeerID))
	has(t, billing, AttrCost.Int64(int64(res.Payment.Price)), AttrBilledOutput.Int64(int64(res.Payment.Units.OutputTokens)),
		AttrBilledInput.Int64(int64(res.Payment.Units.InputTokens)))
	has(t, payment, AttrPayment.String(PaymentOffChain), AttrPaymentKept.Bool(true))
	for _, s := range []tracetest.SpanStub{receiptSpan, billing, payment} {
		status(t, s, codes.Unset)
	}
}

// TestTracePlain: a plain request is a root "chat {model}" span with the
// GenAI attributes and one child per step.
func TestTracePlain(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 2, testConfig(), answer(ms, "Hello", " there"))
		exp := traced(t, m)
		res := mustRoute(t, m, request())
		tr := tree(t, exp)
		root := tr.root()
		if root.Name != "chat tiny" {
			t.Fatalf("root span %q", root.Name)
		}
		has(t, root, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", modelName),
			attribute.String("gen_ai.response.model", modelName), attribute.Int("gen_ai.usage.input_tokens", res.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", res.CompletionTokens), attribute.Int("gen_ai.request.max_tokens", 16),
			AttrCost.Int64(int64(res.Payment.Price)), AttrProviderPeer.String(m.provs[0].id.String()),
			AttrHedged.Bool(false), AttrAttempts.Int(1))
		status(t, root, codes.Unset)
		cs := tr.expect(root, SpanIntake, SpanQuote, SpanAttempt, SpanReceipt, SpanBilling, SpanPaymentRecord)
		has(t, cs[1], AttrCandidates.Int(2), AttrBestPeer.String(m.provs[0].id.String()))
		mach := m.provs[0].ident.MachineID()
		has(t, cs[2], AttrProviderPeer.String(m.provs[0].id.String()), AttrProviderMachine.String(mach.String()),
			AttrOutcome.String(OutcomeOK), AttrHedge.Bool(false), AttrRound.Int(0),
			attribute.Float64("gen_ai.response.time_to_first_chunk", ms.Seconds()))
		billed(t, res, cs[3], cs[4], cs[5])
		tr.expect(cs[2])

		// The buyer's context carries the parent: the root becomes its child.
		exp.Reset()
		parent, pspan := m.gw.tracer.Start(context.Background(), "http.request")
		if _, err := m.gw.Route(parent, request(), func(Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		pspan.End()
		tr = tree(t, exp)
		if root = tr.root(); root.Name != "http.request" || len(tr.expect(root, "chat tiny")) != 1 {
			t.Fatalf("root %s", root.Name)
		}

		// A request refused at intake: the root and the intake span say why.
		exp.Reset()
		req := request()
		req.Sampling.TopP = 2
		if _, _, err := route(t, m, req); err == nil {
			t.Fatal("top_p 2 accepted")
		}
		tr = tree(t, exp)
		root = tr.root()
		status(t, root, codes.Error)
		cs = tr.expect(root, SpanIntake)
		status(t, cs[0], codes.Error)
		has(t, cs[0], attribute.String("error.type", "invalid_request"))
	})
}

// TestTraceHedged: the hedge is an attempt of its own (hedge=true) beside
// the primary's; the loser is cancelled, not failed, and only the winner
// is billed.
func TestTraceHedged(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		// The primary's latency is unknown: the hedge goes out at MaxDelay.
		m := newMarket(t, st, 2, testConfig(), answer(time.Second, "slow"), answer(10*ms, "fast"))
		exp := traced(t, m)
		res := mustRoute(t, m, request())
		if !res.Hedged || res.Provider.PeerID != m.provs[1].id.String() {
			t.Fatalf("result %+v", res)
		}
		tr := tree(t, exp)
		root := tr.root()
		has(t, root, AttrHedged.Bool(true), AttrHedgeWon.Bool(true), AttrProviderPeer.String(m.provs[1].id.String()),
			AttrCost.Int64(int64(res.Payment.Price)), AttrAttempts.Int(2))
		cs := tr.expect(root, SpanIntake, SpanQuote, SpanAttempt, SpanAttempt, SpanReceipt, SpanBilling, SpanPaymentRecord)
		primary, hedged := cs[2], cs[3]
		has(t, primary, AttrProviderPeer.String(m.provs[0].id.String()), AttrHedge.Bool(false), AttrOutcome.String(OutcomeCancelled))
		status(t, primary, codes.Unset)
		has(t, hedged, AttrProviderPeer.String(m.provs[1].id.String()), AttrHedge.Bool(true), AttrRound.Int(0), AttrOutcome.String(OutcomeOK))
		status(t, hedged, codes.Unset)
		if d := hedged.StartTime.Sub(primary.StartTime); d != 500*ms {
			t.Fatalf("hedge span starts %v after the primary's", d)
		}
		billed(t, res, cs[4], cs[5], cs[6])
	})
}

// TestTraceContinued: a stream broken mid-answer is a failed attempt, then
// a continuation span (from the broken provider to its successor) holding
// the successor's attempt, then the successor's receipt and billing.
func TestTraceContinued(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		cut := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"The ", "sea ", "is"}, cutAt: 2}
		}
		m := newMarket(t, st, 3, testConfig(), cut, answer(ms, "is ", "blue."), answer(ms, "never"))
		exp := traced(t, m)
		res := mustRoute(t, m, request())
		if !res.Continued {
			t.Fatalf("result %+v", res)
		}
		p0, p1 := m.provs[0].id.String(), m.provs[1].id.String()
		tr := tree(t, exp)
		root := tr.root()
		has(t, root, AttrContinued.Bool(true), AttrProviderPeer.String(p1), AttrCost.Int64(int64(res.Payment.Price)))
		cs := tr.expect(root, SpanIntake, SpanQuote, SpanAttempt, SpanContinuation, SpanReceipt, SpanBilling, SpanPaymentRecord)
		broken, cont := cs[2], cs[3]
		has(t, broken, AttrProviderPeer.String(p0), AttrOutcome.String(OutcomeFailed))
		status(t, broken, codes.Error)
		has(t, cont, AttrContFrom.String(p0), AttrContTo.String(p1), AttrContSentBytes.Int(len("The sea ")),
			AttrContTokens.Int(2), AttrContRestarted.Bool(false))
		status(t, cont, codes.Unset)
		if !broken.EndTime.After(broken.StartTime) || cont.StartTime.Before(broken.EndTime) {
			t.Fatalf("broken attempt %v..%v, continuation from %v", broken.StartTime, broken.EndTime, cont.StartTime)
		}
		second := tr.expect(cont, SpanAttempt)[0]
		has(t, second, AttrProviderPeer.String(p1), AttrOutcome.String(OutcomeOK), AttrHedge.Bool(false))
		billed(t, res, cs[4], cs[5], cs[6])

		// A successor that cannot continue restarts: two attempts under
		// the continuation, the refused one first.
		restart := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"The ", "sea ", "is ", "blue."}, continueUnsupported: true}
		}
		m = newMarket(t, st, 2, testConfig(), cut, restart)
		exp = traced(t, m)
		res = mustRoute(t, m, request())
		tr = tree(t, exp)
		cs = tr.expect(tr.root(), SpanIntake, SpanQuote, SpanAttempt, SpanContinuation, SpanReceipt, SpanBilling, SpanPaymentRecord)
		has(t, cs[3], AttrContRestarted.Bool(true))
		tries := tr.expect(cs[3], SpanAttempt, SpanAttempt)
		has(t, tries[0], AttrOutcome.String(OutcomeRefused))
		status(t, tries[0], codes.Error)
		has(t, tries[1], AttrOutcome.String(OutcomeOK))
		billed(t, res, cs[4], cs[5], cs[6])
	})
}

// TestTraceFailover: when every attempt fails the root says why, each
// failover round is an attempt of its own, and nothing is billed.
func TestTraceFailover(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		down := func(int, *infer.Request) script { return script{first: ms, fail: errors.New("connection reset")} }
		m := newMarket(t, st, 2, testConfig(), down)
		exp := traced(t, m)
		if _, _, err := route(t, m, request()); err == nil {
			t.Fatal("routed with every provider failing")
		}
		tr := tree(t, exp)
		root := tr.root()
		status(t, root, codes.Error)
		has(t, root, attribute.String("error.type", "providers_failed"), AttrFailovers.Int(1))
		cs := tr.expect(root, SpanIntake, SpanQuote, SpanAttempt, SpanAttempt)
		for i, a := range cs[2:] {
			has(t, a, AttrProviderPeer.String(m.provs[i].id.String()), AttrRound.Int(i), AttrOutcome.String(OutcomeFailed))
			status(t, a, codes.Error)
		}
	})
}

// TestTraceRefusedReceipt: a receipt that does not verify ends the trace
// at the receipt span, an error saying why; nothing is billed.
func TestTraceRefusedReceipt(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		forger := func(int, *infer.Request) script { return script{first: ms, tokens: []string{"hello"}, forge: true} }
		m := newMarket(t, st, 1, testConfig(), forger)
		exp := traced(t, m)
		res := mustRoute(t, m, request())
		tr := tree(t, exp)
		root := tr.root()
		has(t, root, AttrCost.Int64(0))
		status(t, root, codes.Unset) // the buyer has the answer, marked unverified
		cs := tr.expect(root, SpanIntake, SpanQuote, SpanAttempt, SpanReceipt)
		has(t, cs[3], AttrVerified.Bool(false), AttrProblem.String(res.Receipt.Problem))
		status(t, cs[3], codes.Error)
	})
}

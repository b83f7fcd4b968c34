package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/quantile"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Deps are the gateway's collaborators.
type Deps struct {
	// Transport carries requests to providers: HostTransport in a node, a
	// scripted one in tests.
	Transport Transport
	Table     *router.Table
	Ledger    Ledger
	// Payments, on a chain, pays providers from the buyers' escrows with
	// signed payment records; Ledger then only keeps receipts. Without it
	// the gateway bills from Ledger's off-chain balances (a test mode).
	Payments   Payments
	Clock      clock.Clock
	Log        *slog.Logger
	Registerer prometheus.Registerer
	// OnCall, if set, receives what was measured of each call to a
	// provider (see Call). It runs on the request's goroutine: keep it short.
	OnCall func(Call)
	// Names resolves model names to catalog IDs (the chain's name
	// records); nil without a chain, when a name must be unambiguous
	// among the offers themselves.
	Names router.Names
	// Tokenizers are the models whose tokens this gateway counts itself
	// (see TokenCounter), by catalog ID.
	Tokenizers map[inference.ModelID]TokenCounter
	// Tracer makes every routed request one trace (see trace.go); nil is
	// otel's no-op provider.
	Tracer trace.TracerProvider
	// Successors assigns and challenges session successors; nil leaves
	// every session without one (successor_reason "unsupported").
	Successors Successors
	// Operators names providers' on-chain operators (with a chain): a
	// successor is always another operator's. Nil (no chain) falls back
	// to another machine.
	Operators Operators
	// Streams pays standby successors by stream escrow (with a chain);
	// nil opens none.
	Streams StandbyStreams
	// SessionStore, when set, keeps the session table across restarts
	// (RestoreSessions); nil keeps it in memory only.
	SessionStore SessionStore
	// Surcharges, with a chain, are the governed verification surcharges
	// (the chain's surcharge_* params): the only ones quotes and bills
	// use. Nil (no chain) falls back to Config.Surcharges.
	Surcharges SurchargeSource
}

// SurchargeSource reads the verification surcharges in force.
type SurchargeSource interface {
	Surcharges(ctx context.Context) (pricing.Surcharges, error)
}

// Ledger holds buyers' funds and what was paid: the node's datastore.
type Ledger interface {
	// Balance is the account's spendable micro-units.
	Balance(account string) (uint64, error)
	// SettleWithReceipt debits the payer and stores the record and the
	// request's receipt atomically, refusing a record whose request digest
	// was settled before.
	SettleWithReceipt(rec *receipt.Bill, nonce, envelope []byte, meta store.ReceiptMeta) error
	// PutReceipt keeps a receipt envelope by request nonce, with whether it
	// verified and why not.
	PutReceipt(nonce, envelope []byte, meta store.ReceiptMeta) error
	// WaitDurable returns once every write made before it is on disk.
	WaitDurable(ctx context.Context) error
}

// Gateway routes requests to providers.
type Gateway struct {
	cfg       Config
	transport Transport
	table     *router.Table
	ledger    Ledger
	payments  Payments
	clock     clock.Clock
	log       *slog.Logger
	selector  *strategy.Selector
	latency   *quantile.Set[peer.ID]
	gaps      *gapTracker
	samples   *latencyLog // the latest of what latency was fed, for plots
	// throughput is each provider's output tokens/s as measured here.
	throughput *throughputs
	recent     *recentRing
	breakers   *breaker.Set[peer.ID]
	metrics    *Metrics
	certs      *identity.CertCache
	onCall     func(Call)
	names      router.Names
	limits     *limiter
	watch      *breakerWatch
	started    time.Time // when New ran, for the warm-up answer
	// tokenizers is read-only after New.
	tokenizers map[inference.ModelID]TokenCounter
	tracer     trace.Tracer
	traced     bool // Deps.Tracer was set

	sessions       *sessionTable
	sessionMetrics *sessionMetrics
	successors     Successors
	operators      Operators
	streams        StandbyStreams
	surcharges     SurchargeSource
	store          SessionStore
	// persistMu orders the store's writes as the table's changes were
	// made (taken before the table's lock is released; persistLocked).
	persistMu sync.Mutex
}

// New returns a gateway.
func New(cfg Config, d Deps) (*Gateway, error) {
	if err := cfg.Validate("gateway: "); err != nil {
		return nil, err
	}
	if d.Transport == nil {
		return nil, errors.New("gateway: no transport")
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	rnd := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	sel, err := strategy.New(cfg.Weights, rnd)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	lat, err := quantile.NewSet[peer.ID](quantile.Config{})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	gaps, err := newGapTracker()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	brs, err := breaker.NewSet[peer.ID](d.Clock, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), breaker.Config{})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	w, err := newBreakerWatch(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	sm, err := newSessionMetrics(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	g := &Gateway{cfg: cfg, transport: d.Transport, table: d.Table, ledger: d.Ledger, payments: d.Payments, clock: d.Clock, log: d.Log.With("component", "gateway"),
		selector: sel, latency: lat, gaps: gaps, breakers: brs, metrics: m, certs: identity.NewCertCache(1024), onCall: d.OnCall, names: d.Names,
		limits: newLimiter(d.Clock, cfg.BuyerDefaults, cfg.Buyers), tokenizers: d.Tokenizers, watch: w, started: d.Clock.Now(),
		tracer: tracerOf(d.Tracer), traced: d.Tracer != nil, samples: newLatencyLog(), recent: newRecentRing(), throughput: newThroughputs(),
		sessions: newSessionTable(cfg.Sessions), sessionMetrics: sm, successors: d.Successors, operators: d.Operators, streams: d.Streams, store: d.SessionStore,
		surcharges: d.Surcharges}
	brs.OnChange(g.breakerChanged)
	return g, nil
}

// Metrics returns the routing counters.
func (g *Gateway) Metrics() *Metrics { return g.metrics }

// Snapshot is the counters with each provider's latency figures.
func (g *Gateway) Snapshot() Snapshot {
	s := g.metrics.Snapshot()
	s.Sessions = g.sessionMetrics.snapshot(g.sessions.len())
	brs := g.breakers.Snapshots()
	for id, c := range s.Providers {
		p, err := peer.Decode(id)
		if err != nil {
			continue
		}
		l := g.latency.Snapshot(p)
		c.LatencySamples, c.P95Ms = l.Count, float64(l.P95.Microseconds())/1000
		if b, ok := brs[p]; ok {
			c.Breaker = g.breakerView(p, b)
		}
	}
	return s
}

// Route serves req: onDelta receives the answer in order as it arrives
// (for streaming); the Result repeats it whole. ctx is the buyer's: when
// it ends before the first token every attempt is cancelled; once text
// flows, its end means the buyer left, and the provider is stopped and
// paid for what was delivered. The request is one trace, its root a child
// of the span ctx carries, if any.
func (g *Gateway) Route(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	if req.Sampling.MaxTokens == 0 {
		req.Sampling.MaxTokens = g.cfg.DefaultMaxTokens
	}
	if req.Verification == "" {
		req.Verification = terms.VerifyNone
	}
	start := g.clock.Now()
	timer := g.metrics.timeRequest(g.clock, start)
	ctx, span := g.startRoute(ctx, req)
	res, err := g.route(ctx, req, timer.wrap(onDelta))
	if t := req.turn; t != nil && (err != nil || res == nil || res.Session == nil) {
		g.abortTurn(t)
	}
	endRoute(span, res, err)
	g.remember(start, req, res, err)
	timer.done(req, res, err)
	return res, err
}

func (g *Gateway) route(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	_, intake := g.startSpan(ctx, SpanIntake)
	err := Validate(req)
	if err == nil && req.Payer != "" && !req.Probe {
		var release func()
		if release, err = g.limits.admit(req.Payer); err != nil {
			g.metrics.limited.Inc()
		} else {
			defer release()
		}
	}
	if err == nil && req.Session != nil {
		req.turn, err = g.beginTurn(req)
	}
	endSpan(intake, err)
	if err != nil {
		return nil, err
	}
	buyer := ctx
	// The calls outlive the buyer's context by as long as it takes to stop
	// the provider and collect its receipt; the deadline bounds them.
	ctx, cancel := g.clock.WithTimeout(context.WithoutCancel(buyer), g.cfg.Deadline)
	defer cancel()
	raceOver := context.AfterFunc(buyer, cancel)
	defer raceOver()
	g.metrics.requests.Inc()
	cands, choices, s, rep, err := g.raceModels(ctx, req)
	if err != nil {
		return nil, err
	}
	if !raceOver() { // the buyer left during the race
		s.halt()
		return nil, fmt.Errorf("%w before the first token", errBuyerGone)
	}
	s.won.Store(true)
	res, err := g.finish(ctx, buyer.Done(), req, cands, choices, s, onDelta)
	if res != nil {
		res.Attempts += len(rep.Tries)
		res.Hedged = rep.HedgesDispatched > 0
		if req.turn != nil && err == nil {
			// The race's winner holds the session, a continuation's
			// finisher notwithstanding: the turn's state is its.
			res.Session = g.commitTurn(ctx, req.turn, s.choice, res.Continued)
		}
	}
	return res, err
}

// raceModel quotes, ranks and races req's model: the winning stream, or
// why none won.
func (g *Gateway) raceModel(ctx context.Context, req *Request) ([]strategy.Candidate, map[peer.ID]choice, *stream, hedge.Report, error) {
	qctx, quote := g.startSpan(ctx, SpanQuote)
	cands, choices, err := g.candidatesWaiting(qctx, req)
	if err == nil && req.turn != nil {
		cands, err = g.arrange(req.turn, cands, choices)
	}
	if err == nil {
		cands = g.suspectedLast(cands)
	}
	if err == nil {
		traceCandidates(quote, cands)
		err = g.checkFunds(qctx, req.Payer, cands[0].Price)
	}
	if err == nil {
		err = g.reserveBudget(qctx, cands)
	}
	endSpan(quote, err)
	if err != nil {
		return nil, nil, nil, hedge.Report{}, err
	}
	retries := g.cfg.MaxRetries
	if retries == 0 {
		retries = -1 // hedge.Run reads 0 as its default
	}
	eligible := func(c strategy.Candidate) bool {
		return g.breakers.Ready(c.Peer) && g.table.Status(c.Peer) == router.StatusUp
	}
	s, rep, err := g.raceWithRetries(ctx, cands, eligible, func() (*stream, hedge.Report, error) {
		return hedge.Run(ctx, cands, g.attemptFunc(req, choices), hedge.Options{
			// A tee attempt answers only when it ends (holdTEE), so a
			// hedge timed by first tokens would always fire.
			NoHedge:       req.NoHedge || req.turn != nil || req.Verification == terms.VerifyTEE,
			MaxRetries:    retries,
			Clock:         g.clock,
			LabelAttempts: g.traced,
			Eligible:      eligible,
		})
	})
	g.metrics.record(rep)
	traceRace(trace.SpanFromContext(ctx), rep)
	if err != nil {
		return nil, nil, nil, rep, g.routeError(err, rep)
	}
	return cands, choices, s, rep, nil
}

func (g *Gateway) checkFunds(ctx context.Context, payer string, price uint64) error {
	if g.payments != nil {
		return g.checkEscrow(ctx, payer, price)
	}
	if g.ledger == nil {
		return nil
	}
	bal, err := g.ledger.Balance(payer)
	if err != nil {
		return fmt.Errorf("gateway: balance of %s: %w", payer, err)
	}
	if bal < price {
		return &Error{Status: http.StatusPaymentRequired, Code: "insufficient_funds",
			Message: fmt.Sprintf("account %s holds %d micro-units; the best quote is %d", payer, bal, price)}
	}
	return nil
}

// routeError maps a failed race to what the buyer is told: a provider's
// own refusal (400-class) keeps its status and reason.
func (g *Gateway) routeError(err error, rep hedge.Report) error {
	var ef *infer.ErrorFrame
	var ge *Error
	switch {
	case errors.As(err, &ge): // the gateway's own refusal (a session's no_successor)
		return ge
	case errors.As(err, &ef):
		return &Error{Status: ef.Status, Code: ef.Code, Message: ef.Message, RetryAfter: time.Duration(ef.RetryAfterMs) * time.Millisecond}
	case errors.Is(err, hedge.ErrDeadline):
		return &Error{Status: http.StatusGatewayTimeout, Code: "deadline", Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return err
	default:
		return &Error{Status: http.StatusBadGateway, Code: "providers_failed",
			Message: fmt.Sprintf("%d attempts failed: %v", len(rep.Tries), err), RetryAfter: time.Second}
	}
}

// Breakers is each provider's circuit breaker as it stands now.
func (g *Gateway) Breakers() map[peer.ID]breaker.Snapshot { return g.breakers.Snapshots() }

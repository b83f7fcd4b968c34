package attacktest

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// env is one run's shared state: the target and its chain client.
type env struct {
	t   *Target
	c   *chain
	log *slog.Logger

	mu    sync.Mutex
	known map[terms.Hash32]bool // request digests of the honest calls' records
}

// Scenario is one attack: Run returns its verdict and a detail line, or
// an error when it could not run at all (reported as ERROR).
type Scenario struct {
	Name   string
	Origin string
	Run    func(ctx context.Context, e *env) (Verdict, string, error)
}

// All lists every scenario, in the order they run: the cheap HTTP probes
// first, the chain races after.
func All() []Scenario {
	return []Scenario{
		{"session-read-unauthenticated", "#35 low", getSessionUnauth},
		{"oversized-requests", "#19 row 2", oversized},
		{"stream-flood-one-token", "#19 row 3", streamFlood},
		{"slow-body-senders", "#35 high, #19 row 7", slowBodies},
		{"aborted-stream-billed", "#19 row 8", abortedStream},
		{"registration-hijack", "#19 row 1", registrationHijack},
		{"front-run-own-settler-1µ", "#35 critical", frontRun},
		{"record-combinations-and-race", "#35 item 4", recordCombos},
		{"gateway-records-never-served", "#35 item 4", neverServed},
		{"fee-spam-failing-records", "#35 item 4/5", feeSpam},
		{"unregistered-peer-free-calls", "#19 row 4", unregisteredFreeCalls},
		{"name-squat", "#19 row 5", inTree("node TestGatewaySquatterNeverRouted (needs a rogue provider)")},
		{"relay-graylisting", "#19 row 6", inTree("gossip TestRelayNotPenalisedForAnotherView (needs gossip peers)")},
		{"provider-units-beyond-wire", "#35 item 4", inTree("router/gateway billing capped by the wire; a receipt over-claiming is refused on chain as 52 (ledger TestRecordBoundToReceipt): needs a rogue provider")},
	}
}

func inTree(where string) func(context.Context, *env) (Verdict, string, error) {
	return func(context.Context, *env) (Verdict, string, error) { return NA, "kept in-tree: " + where, nil }
}

// Run runs the scenarios whose names match only (nil: all) against t,
// each followed by one honest call, and returns their results in order.
func Run(ctx context.Context, t Target, only *regexp.Regexp, log *slog.Logger) ([]Result, error) {
	t = t.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if t.API == "" || t.Token == "" || t.BuyerKey == nil || t.Model == "" {
		return nil, fmt.Errorf("attacktest: the target needs an API URL, a buyer token, the buyer's account key and a model")
	}
	c, err := newChain(ctx, t.API, t.Settle)
	if err != nil {
		return nil, err
	}
	e := &env{t: &t, c: c, log: log, known: map[terms.Hash32]bool{}}
	var out []Result
	for _, s := range All() {
		if only != nil && !only.MatchString(s.Name) {
			continue
		}
		start := time.Now()
		log.Info("attacktest: scenario", "name", s.Name)
		v, detail, err := s.Run(ctx, e)
		if err != nil {
			v, detail = Failed, err.Error()
		}
		r := Result{Name: s.Name, Origin: s.Origin, Verdict: v, Detail: detail}
		if v != NA {
			h, ok := e.honest(ctx)
			r.Honest = h
			if !ok && v == Held {
				r.Verdict, r.Detail = Broke, "honest traffic failed after the attack: "+detail
			}
		} else {
			r.Honest = "-"
		}
		r.Took = time.Since(start)
		log.Info("attacktest: result", "name", s.Name, "verdict", string(r.Verdict), "detail", r.Detail, "honest", r.Honest)
		out = append(out, r)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// honest makes one honest call and notes its record as the buyer's own.
func (e *env) honest(ctx context.Context) (string, bool) {
	a, err := e.t.chat(ctx, e.t.Token, "honest call after the attack", 4, nil)
	switch {
	case err != nil:
		return err.Error(), false
	case a.Status != 200:
		return fmt.Sprintf("HTTP %d %.120s", a.Status, a.Body), false
	}
	e.note(a)
	return fmt.Sprintf("ok %s", a.Took.Round(time.Millisecond)), true
}

// note remembers an answer's record as an honest call's.
func (e *env) note(a answer) {
	if a.Record == nil {
		return
	}
	e.mu.Lock()
	e.known[a.Record.RequestDigest] = true
	e.mu.Unlock()
}

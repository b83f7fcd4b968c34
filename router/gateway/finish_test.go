package gateway

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/router/breaker"
)

func texts(ds []Delta) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Text)
	}
	return b.String()
}

// TestContinuation: a stream cut mid-answer continues on the next provider
// with the text and token IDs so far; the buyer's text is seamless.
func TestContinuation(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		cut := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"The ", "sea ", "is"}, cutAt: 2}
		}
		m := newMarket(t, st, 3, testConfig(), cut, answer(ms, "is ", "blue."), answer(ms, "never"))
		res, ds, err := route(t, m, request())
		if err != nil {
			t.Fatal(err)
		}
		cs := m.calls()
		if len(cs) != 2 || cs[1].peer != m.provs[1].id {
			t.Fatalf("calls %v", peersOf(cs))
		}
		if cs[1].req.Continuation != "The sea " || !slices.Equal(cs[1].req.ContinuationTokens, []int{1000, 1001}) ||
			cs[1].req.Sampling.MaxTokens != 16 {
			t.Fatalf("continuation request %q %v %+v", cs[1].req.Continuation, cs[1].req.ContinuationTokens, cs[1].req.Sampling)
		}
		if res.Text != "The sea is blue." || texts(ds) != res.Text || !res.Continued || res.Provider.PeerID != m.provs[1].id.String() {
			t.Fatalf("result %+v, deltas %q", res, texts(ds))
		}
		if res.Payment == nil || res.Payment.Units.OutputTokens != 2 {
			t.Fatalf("the successor is paid for its own two tokens: %+v", res.Payment)
		}
		if c := m.gw.Snapshot().Providers[m.provs[0].id.String()]; c.Failures != 1 {
			t.Fatalf("the broken provider's counts %+v", c)
		}
	})
}

// TestContinuationRestart: a successor that cannot continue restarts the
// answer; the repeat of what the buyer has is skipped.
func TestContinuationRestart(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		cut := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"The ", "sea ", "is"}, cutAt: 2}
		}
		restart := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"The ", "sea ", "is ", "blue."}, continueUnsupported: true}
		}
		m := newMarket(t, st, 2, testConfig(), cut, restart)
		res, ds, err := route(t, m, request())
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "The sea is blue." || texts(ds) != res.Text || res.Payment == nil {
			t.Fatalf("result %+v, deltas %q", res, texts(ds))
		}
		if cs := m.calls(); len(cs) != 3 || cs[2].req.Continuation != "" {
			t.Fatalf("calls %v: race, refused continuation, restart", peersOf(cs))
		}
	})
}

// TestContinuationBoundedRetry: one continuation only; when it breaks too
// the buyer gets an explicit interrupted error and never a complete
// answer, and no third provider is tried.
func TestContinuationBoundedRetry(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		cut := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"one ", "two ", "three"}, cutAt: 1}
		}
		m := newMarket(t, st, 3, testConfig(), cut, cut, answer(ms, "never"))
		before := balance(t, st)
		res, ds, err := route(t, m, request())
		var ge *Error
		if res != nil || !errors.As(err, &ge) || ge.Status != http.StatusBadGateway || ge.Code != "stream_interrupted" || !ge.Partial {
			t.Fatalf("result %+v, err %v", res, err)
		}
		if texts(ds) != "one one " {
			t.Fatalf("buyer received %q", texts(ds))
		}
		if cs := m.calls(); len(cs) != 2 {
			t.Fatalf("calls %v, want the primary and one continuation", peersOf(cs))
		}
		if balance(t, st) != before {
			t.Fatal("a truncated answer was charged")
		}
		// Alone, a broken stream cannot continue at all.
		m = newMarket(t, st, 1, testConfig(), cut)
		if _, _, err := route(t, m, request()); !errors.As(err, &ge) || ge.Code != "stream_interrupted" || !strings.Contains(ge.Message, "no other provider") {
			t.Fatalf("single provider: %v", err)
		}
	})
}

// TestBillCappedByWire: a provider claiming more output than it sent is
// billed by the wire's bound; the charge equals the recorded price.
func TestBillCappedByWire(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		greedy := func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"ab", "cd"}, claim: 900}
		}
		m := newMarket(t, st, 1, testConfig(), greedy)
		before := balance(t, st)
		res := mustRoute(t, m, request())
		if !res.Receipt.Verified || res.Payment == nil {
			t.Fatalf("receipt %+v", res.Receipt)
		}
		// max_tokens (16) caps first, then the text: 4 bytes + the end token.
		if got := res.Payment.Units.OutputTokens; got != 4+receipt.OutputEndTokens {
			t.Fatalf("billed %d output tokens for 4 bytes of text (claimed 900)", got)
		}
		if !slices.Contains(res.Receipt.Capped, "output:max_tokens") || !slices.Contains(res.Receipt.Capped, "output:text_bytes") {
			t.Fatalf("capped %v", res.Receipt.Capped)
		}
		if before-balance(t, st) != res.Payment.Price || res.Payment.Price != 5*1+5*10 {
			t.Fatalf("charged %d, price %d", before-balance(t, st), res.Payment.Price)
		}
	})
}

// TestBillRefusesBadReceipt: a receipt that does not match what was
// received is not paid, counts against the provider and is reported as a
// failed call; the buyer still gets the answer, marked unverified.
func TestBillRefusesBadReceipt(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		forger := func(int, *infer.Request) script {
			return script{first: ms, tokens: []string{"hello"}, forge: true}
		}
		m := newMarket(t, st, 1, testConfig(), forger)
		before := balance(t, st)
		res := mustRoute(t, m, request())
		if res.Text != "hello" || res.Receipt.Verified || res.Payment != nil || !strings.Contains(res.Receipt.Problem, "output") {
			t.Fatalf("result %+v receipt %+v", res, res.Receipt)
		}
		if balance(t, st) != before {
			t.Fatal("a refused receipt was paid")
		}
		if rs := m.reports(); len(rs) != 1 || rs[0].Success || rs[0].Price != 0 {
			t.Fatalf("reports %+v", rs)
		}
		if s := m.gw.Snapshot(); s.BadReceipts != 1 {
			t.Fatalf("bad receipts %d", s.BadReceipts)
		}
		if snap := m.gw.breakers.Get(m.provs[0].id).Snapshot(); snap.ConsecutiveFailures != 1 {
			t.Fatalf("breaker %+v: the refused receipt is a failure", snap)
		}
	})
}

// TestBuyerLeavesMidStream: the provider is stopped, its receipt for what
// it generated verifies, and the buyer pays only for what it received;
// a transport that returns no final frame leaves nothing billed, and
// neither counts against the provider.
func TestBuyerLeavesMidStream(t *testing.T) {
	tokens := []string{"aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh"}
	for _, c := range []struct {
		name   string
		cancel bool // the buyer's context ends (else its writes fail)
		final  bool // the provider answers the stop with a receipt
		hang   bool // the provider ignores the stop and goes silent
	}{{"write fails", false, true, false}, {"context ends", true, true, false}, {"no final", false, false, false}, {"silent", false, false, true}} {
		t.Run(c.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, st *bubbleLedger) {
				sc := func(int, *infer.Request) script {
					return script{first: ms, gap: 10 * ms, tokens: tokens, extraOnStop: "unsent"}
				}
				m := newMarket(t, st, 1, testConfig(), sc)
				m.tr.dropOnStop, m.tr.hangOnStop = !c.final && !c.hang, c.hang
				start := time.Now()
				before := balance(t, st)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var got strings.Builder
				n := 0
				_, err := m.gw.Route(ctx, request(), func(d Delta) error {
					if n == 3 {
						if c.cancel {
							cancel()
							time.Sleep(15 * ms) // the next token finds the buyer gone
						} else {
							return errors.New("write: broken pipe")
						}
					}
					n++
					got.WriteString(d.Text)
					return nil
				})
				if !errors.Is(err, errBuyerGone) {
					t.Fatalf("err %v, want the buyer's departure", err)
				}
				if took := time.Since(start); took > 3*10*ms+stopGrace+ms || c.hang != (took >= stopGrace) {
					t.Fatalf("Route returned %v after the start; the grace is %v", took, stopGrace)
				}
				cs := m.calls()
				if len(cs) != 1 || !cs[0].stopped || cs[0].cancelled {
					t.Fatalf("call %+v: want stopped, not reset", cs[0])
				}
				pays, err := st.ListPayments("alice", 10)
				if err != nil {
					t.Fatal(err)
				}
				if !c.final {
					if len(pays) != 0 || balance(t, st) != before {
						t.Fatalf("billed without a receipt: %+v", pays)
					}
				} else {
					delivered := uint64(len(got.String()))
					if len(pays) != 1 || pays[0].Units.OutputTokens > delivered+receipt.OutputEndTokens || pays[0].Units.OutputTokens == 0 {
						t.Fatalf("delivered %q; payments %+v", got.String(), pays)
					}
					if before-balance(t, st) != pays[0].Price {
						t.Fatalf("charged %d, recorded %d", before-balance(t, st), pays[0].Price)
					}
				}
				if snap := m.gw.breakers.Get(m.provs[0].id).Snapshot(); snap.ConsecutiveFailures != 0 || snap.State != breaker.Closed {
					t.Fatalf("breaker %+v after the buyer left", snap)
				}
				for _, r := range m.reports() {
					if !r.Success {
						t.Fatalf("the buyer's departure reported as a failed call: %+v", r)
					}
				}
			})
		})
	}
}

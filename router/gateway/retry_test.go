package gateway

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestOnlyProviderRetried: the only provider of a model answers 429 with
// Retry-After 2 s, a 500 once, or 402 unpaid (it still waits for this
// gateway's record of an earlier call); the gateway waits and tries it
// again within the deadline, and the request succeeds. A 400, or a 402
// payment_required (the escrow cannot cover the call), is not retried,
// and a Retry-After longer than the gateway waits fails at once.
func TestOnlyProviderRetried(t *testing.T) {
	st := openStore(t)
	for _, c := range []struct {
		name     string
		first    *infer.ErrorFrame
		ok       bool
		calls    int
		minDelay time.Duration
	}{
		{"429 with Retry-After 2s", &infer.ErrorFrame{Status: http.StatusTooManyRequests, Code: terms.CodeCapacity, RetryAfterMs: 2000, Retryable: true}, true, 2, 2 * time.Second},
		{"500 once", &infer.ErrorFrame{Status: http.StatusInternalServerError, Code: terms.CodeInternal}, true, 2, retryBackoff},
		{"402 unpaid with Retry-After 3s", &infer.ErrorFrame{Status: http.StatusPaymentRequired, Code: terms.CodeUnpaid, RetryAfterMs: 3000, Retryable: true}, true, 2, 3 * time.Second},
		{"402 payment_required stands", &infer.ErrorFrame{Status: http.StatusPaymentRequired, Code: terms.CodePaymentRequired}, false, 1, 0},
		{"400 stands", &infer.ErrorFrame{Status: http.StatusBadRequest, Code: "context_length_exceeded"}, false, 1, 0},
		{"Retry-After beyond the wait", &infer.ErrorFrame{Status: http.StatusTooManyRequests, Code: terms.CodeCapacity, RetryAfterMs: 60_000, Retryable: true}, false, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				once := func(n int, _ *infer.Request) script {
					if n == 0 {
						return script{first: ms, fail: c.first}
					}
					return script{first: ms, tokens: []string{"served"}}
				}
				m := newMarket(t, st, 1, testConfig(), once)
				start := time.Now()
				res, _, err := route(t, m, request())
				took := time.Since(start)
				if got := len(m.calls()); got != c.calls {
					t.Fatalf("%d calls, want %d", got, c.calls)
				}
				if !c.ok {
					if err == nil {
						t.Fatalf("succeeded after %s", took)
					}
					return
				}
				if err != nil || res.Text != "served" {
					t.Fatalf("result %+v, error %v", res, err)
				}
				if took < c.minDelay || took > c.minDelay+time.Second {
					t.Fatalf("served after %s, want just after %s", took, c.minDelay)
				}
				if res.Attempts != 2 {
					t.Fatalf("attempts %d, want 2", res.Attempts)
				}
			})
		})
	}
}

// TestHeldBackProviderWaitedFor: a request arriving while the only
// provider is still held back by an earlier Retry-After waits it out and
// is served, instead of a 503 no_provider.
func TestHeldBackProviderWaitedFor(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		busy := func(n int, _ *infer.Request) script {
			if n == 0 {
				return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusTooManyRequests, Code: terms.CodeCapacity, RetryAfterMs: 8000, Retryable: true}}
			}
			return script{first: ms, tokens: []string{"served"}}
		}
		m := newMarket(t, st, 1, testConfig(), busy)
		if _, _, err := route(t, m, request()); err == nil {
			t.Fatal("an 8 s Retry-After was waited for")
		}
		time.Sleep(5 * time.Second) // 3 s of the hold left: short enough to wait
		m.beat()
		start := time.Now()
		res, _, err := route(t, m, request())
		if err != nil || res.Text != "served" {
			t.Fatalf("result %+v, error %v", res, err)
		}
		if took := time.Since(start); took < 3*time.Second || took > 4*time.Second {
			t.Fatalf("served after %s, want once the hold ended (3 s)", took)
		}
		if got := len(m.calls()); got != 2 {
			t.Fatalf("%d calls, want 2", got)
		}
	})
}

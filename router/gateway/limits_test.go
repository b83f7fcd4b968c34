package gateway

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func limited(err error, code string) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.Status == http.StatusTooManyRequests && ge.Code == code && ge.RetryAfter >= time.Second
}

// TestBuyerConcurrencyLimit: a buyer's requests beyond its max_concurrent
// are answered 429 naming the limit, other buyers are not held back, and a
// finished request frees its slot.
func TestBuyerConcurrencyLimit(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		cfg := testConfig()
		cfg.BuyerDefaults = BuyerLimits{MaxConcurrent: 2, RatePerMinute: 600}
		cfg.Buyers = map[string]BuyerLimits{"bob": {MaxConcurrent: 3}}
		m := newMarket(t, st, 1, cfg, answer(time.Second, "slow"))
		var wg sync.WaitGroup
		errs := make([]error, 7)
		for i := range errs {
			req := request()
			if i >= 3 {
				req.Payer = "bob"
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = route(t, m, req)
			}()
			time.Sleep(ms) // in order
		}
		wg.Wait()
		for i, err := range errs {
			refused := i == 2 || i == 6 // alice's third, bob's fourth
			if refused != limited(err, "concurrency_limit_exceeded") || !refused && err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if refused && !strings.Contains(err.Error(), "max_concurrent") {
				t.Fatalf("request %d: %v does not name the limit", i, err)
			}
		}
		if _, _, err := route(t, m, request()); err != nil {
			t.Fatalf("after the others finished: %v", err)
		}
	})
}

// TestBuyerRateLimit: a buyer gets BurstSeconds of its rate at once, then
// 429 naming rate_per_minute, and a token back each 60/rate seconds.
func TestBuyerRateLimit(t *testing.T) {
	st := openStore(t)
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.BuyerDefaults = BuyerLimits{MaxConcurrent: 100, RatePerMinute: 60}
		m := newMarket(t, st, 1, cfg, answer(0, "ok"))
		for i := range 60 * BurstSeconds / 60 {
			if _, _, err := route(t, m, request()); err != nil {
				t.Fatalf("request %d of the burst: %v", i, err)
			}
		}
		_, _, err := route(t, m, request())
		if !limited(err, "rate_limit_exceeded") || !strings.Contains(err.Error(), "rate_per_minute") {
			t.Fatalf("past the burst: %v", err)
		}
		req := request()
		req.Payer = "bob"
		if _, _, err := route(t, m, req); err != nil {
			t.Fatalf("another buyer: %v", err)
		}
		time.Sleep(time.Second)
		m.beat()
		if _, _, err := route(t, m, request()); err != nil {
			t.Fatalf("a second later: %v", err)
		}
		if _, _, err := route(t, m, request()); !limited(err, "rate_limit_exceeded") {
			t.Fatalf("one token a second: %v", err)
		}
	})
	if err := (Config{}).Validate(""); err == nil || !strings.Contains(err.Error(), "buyer_defaults") {
		t.Fatalf("zero defaults: %v", err)
	}
}

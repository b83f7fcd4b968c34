package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// reserveBudget holds the request's worst case against the budget of its
// run-time key (buyerkeys.WithCall), before any provider is called: the
// dearest candidate's quote, since a hedge or a failover may go to any of
// them and each quote bounds what its provider can be billed.
func (g *Gateway) reserveBudget(ctx context.Context, cands []strategy.Candidate) error {
	c := buyerkeys.CallFrom(ctx)
	if c == nil {
		return nil
	}
	var worst uint64
	for _, cd := range cands {
		worst = max(worst, cd.Price)
	}
	if err := c.Reserve(worst); err != nil {
		return KeyRefusal(err)
	}
	return nil
}

// budgetBilled counts a paid bill against the request's run-time key, in
// the key store's synced write, before the buyer gets the answer.
func (g *Gateway) budgetBilled(ctx context.Context, rd []byte, o router.Offer, amount uint64) {
	c := buyerkeys.CallFrom(ctx)
	if c == nil {
		return
	}
	if err := c.Billed(rd, o.Model.Name, o.Peer.String(), amount); err != nil {
		g.log.Error("count a bill against its buyer key; the key's spend misses it", "key", c.Key(), "price", amount, "err", err)
	}
}

// KeyRefusal is a run-time key's refusal as the API answers it: 402
// budget_exceeded, 429 over its concurrency or rate, 401 revoked; any
// other error passes unchanged.
func KeyRefusal(err error) error {
	var be *buyerkeys.BudgetError
	var le *buyerkeys.LimitError
	switch {
	case errors.As(err, &be):
		return &Error{Status: http.StatusPaymentRequired, Code: "budget_exceeded", Message: be.Error()}
	case errors.As(err, &le):
		return &Error{Status: http.StatusTooManyRequests, Code: le.Code, Message: le.Error(), RetryAfter: le.RetryAfter}
	case errors.Is(err, buyerkeys.ErrRevoked):
		return &Error{Status: http.StatusUnauthorized, Code: "invalid_api_key", Message: err.Error()}
	}
	return err
}

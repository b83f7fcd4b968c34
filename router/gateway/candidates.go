package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// choice is one provider this request may go to, with its quote.
type choice struct {
	offer router.Offer
	quote pricing.Quote
	// sur are the surcharges the quote used; the bill uses the same ones,
	// so a governance change between quote and answer cannot reprice it.
	sur pricing.Surcharges
	// operator is the provider's operator account when the buyer's
	// preferences name providers and the chain knows it.
	operator string
}

// estimate bounds the request's units for quoting: every input byte counts
// as at most one token, and the output as max_tokens (a MoE offer adds
// its expert-tokens: quoteUnits).
func estimate(req *Request) pricing.Units {
	n := len(req.Prompt)
	for _, m := range req.Messages {
		n += m.Size() + len(m.Role)
	}
	return pricing.Units{InputTokens: uint64(n), OutputTokens: uint64(req.Sampling.MaxTokens)}
}

// candidates quotes the request at every eligible provider and ranks them.
func (g *Gateway) candidates(ctx context.Context, req *Request) ([]strategy.Candidate, map[peer.ID]choice, error) {
	name, err := strategy.Parse(strategyFor(req))
	if err != nil {
		return nil, nil, &Error{Status: http.StatusBadRequest, Code: "invalid_strategy", Param: "tenzro.strategy", Message: err.Error()}
	}
	modelID, err := g.resolve(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	offers := g.table.OffersOf(modelID)
	if len(offers) == 0 {
		return nil, nil, g.notAnnounced(req.Model, "")
	}
	if offers, err = capable(offers, req); err != nil {
		return nil, nil, err
	}
	sur, err := g.Surcharges(ctx)
	if err != nil {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: "no_surcharges", Message: err.Error(), RetryAfter: time.Second}
	}
	units := estimate(req)
	now := g.clock.Now()
	choices := map[peer.ID]choice{}
	var cands []strategy.Candidate
	var excluded []Exclusion
	params := usedParams(req)
	for _, o := range offers {
		if o.State != gossip.StateWarm || !o.Serves(req.Verification) ||
			(req.PinProvider != "" && o.Peer.String() != req.PinProvider) ||
			!inRegion(req.PinRegion, o.Region) ||
			(req.turn != nil && !inRegion(req.turn.jurisdiction, o.Region)) ||
			!routable(o, req) {
			continue
		}
		op := g.operatorFor(ctx, req.Prefs, o)
		if why := excludedBy(req.Prefs, o, op, params); why != "" {
			excluded = append(excluded, Exclusion{Provider: o.Peer.String(), Reason: why})
			continue
		}
		var id [32]byte
		copy(id[:], o.Model.ModelID)
		q, err := pricing.NewQuote(o.Peer, o.Machine, id, o.Model.RateCard, g.quoteUnits(units, o), req.Verification, sur, now.Add(router.QuoteTTL), pricing.Digest{})
		if err != nil {
			continue
		}
		choices[o.Peer] = choice{offer: o, quote: q, sur: sur, operator: op}
		lat := g.latency.Snapshot(o.Peer)
		cands = append(cands, strategy.Candidate{
			Peer: o.Peer, Price: q.Breakdown.Total, P95: lat.P95, Mean: lat.Mean, LatencyKnown: lat.Known(),
			Standing: g.standing(o), InFlight: o.InFlight, Capacity: o.Capacity,
			Up: o.Status == router.StatusUp, BreakerReady: g.breakers.Ready(o.Peer),
		})
	}
	if len(cands) == 0 && len(excluded) > 0 {
		return nil, nil, noneMeets(req.Model, excluded)
	}
	if len(cands) == 0 {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: "no_provider",
			Message:    "no provider of " + req.Model + " is warm and offers verification " + string(req.Verification) + " under the request's pins",
			RetryAfter: time.Second}
	}
	if wait, held := g.allHeldBack(cands); held {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: "no_provider", RetryAfter: wait, heldBack: true,
			Message: fmt.Sprintf("every provider of %s that could serve the request is held back by a Retry-After or its breaker for %s", req.Model, wait.Round(time.Millisecond))}
	}
	f := strategy.Filter{}
	if req.MaxPrice != nil {
		f.MaxPrice = *req.MaxPrice
	}
	if mp := req.Prefs; mp != nil && mp.MaxPrice != nil && mp.MaxPrice.Total != nil && (f.MaxPrice == 0 || *mp.MaxPrice.Total < f.MaxPrice) {
		f.MaxPrice = *mp.MaxPrice.Total
	}
	ranking, err := g.selector.Rank(name, cands, f)
	if err != nil {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: "no_provider", Message: err.Error(), RetryAfter: time.Second}
	}
	return g.arrangeByPrefs(req.Prefs, ranking.Candidates(), choices), choices, nil
}

// neutralStanding is the standing of a provider the chain says nothing of
// (no chain, or not registered at level none): it does not reorder them.
const neutralStanding = 5000

// standing is the provider's consensus standing in basis points, read by
// the table from the chain (cached per block).
func (g *Gateway) standing(o router.Offer) uint32 {
	if o.StandingKnown {
		return o.Standing
	}
	return neutralStanding
}

package gateway

import (
	"context"
	"fmt"
	"math/bits"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/prefs"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Exclusion is one provider a buyer's preference removed, and which.
type Exclusion struct {
	Provider string `json:"provider"` // peer ID
	Reason   string `json:"reason"`
}

// namesOffer reports whether entry (from order, only or ignore) names o: its
// peer ID, its machine ID, or its on-chain operator account op ("" when
// unknown).
func namesOffer(entry string, o router.Offer, op string) bool {
	return entry == o.Peer.String() || strings.EqualFold(entry, o.Machine.String()) || op != "" && entry == op
}

func namedIn(list []string, o router.Offer, op string) bool {
	return slices.ContainsFunc(list, func(e string) bool { return namesOffer(e, o, op) })
}

// operatorFor is o's operator account when the preferences name
// providers and the chain knows it: an operator's name in order, only or
// ignore stands for every machine it registered.
func (g *Gateway) operatorFor(ctx context.Context, p *prefs.Preferences, o router.Offer) string {
	if g.operators == nil || p == nil || len(p.Order)+len(p.Only)+len(p.Ignore) == 0 {
		return ""
	}
	op, ok, err := g.operators.Operator(ctx, o.Peer, o.Machine)
	if err != nil || !ok {
		return ""
	}
	return op
}

// usedParams are the announced parameter names (gossip.Param*) the request
// uses: those the gateway sees in it, and those the API layer saw
// (Request.Params: a seed the buyer chose, tools, …).
func usedParams(req *Request) []string {
	out := slices.Clone(req.Params)
	if req.TopLogProbs > 0 {
		out = append(out, gossip.ParamLogprobs)
	}
	if req.Sampling.TopK > 0 {
		out = append(out, gossip.ParamTopK)
	}
	if len(req.Sampling.Stop) > 0 {
		out = append(out, gossip.ParamStop)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// perMillion is a per-token price per million tokens, saturating.
func perMillion(p uint64) uint64 {
	hi, lo := bits.Mul64(p, 1_000_000)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// excludedBy is the preference of p that removes offer o, or "" when o
// meets them all. Only the filters: order and the preferred cutoffs
// reorder (arrangeByPrefs), they remove nobody.
func excludedBy(p *prefs.Preferences, o router.Offer, op string, params []string) string {
	if p == nil {
		return ""
	}
	if namedIn(p.Ignore, o, op) {
		return "ignore: the buyer ignores this provider"
	}
	if len(p.Only) > 0 && !namedIn(p.Only, o, op) {
		return "only: not among the providers the buyer allows"
	}
	if !p.Fallbacks() && len(p.Order) > 0 && len(p.Only) == 0 && !namedIn(p.Order, o, op) {
		return "allow_fallbacks: not in order, and the buyer allows no fallback"
	}
	if p.RequireParameters {
		for _, par := range params {
			if !o.Model.Supports(par) {
				return "require_parameters: does not announce " + par
			}
		}
	}
	if p.NoRetention() && !o.NoRetention {
		return "data_collection: announces no claim of retaining no prompts"
	}
	if !p.AllowsQuant(o.Model.Quant) {
		q := o.Model.Quant
		if q == "" {
			q = "none announced"
		}
		return fmt.Sprintf("quantizations: %s (%s) not among %s", q, prefs.QuantClass(o.Model.Quant), strings.Join(p.Quantizations, ", "))
	}
	if mp := p.MaxPrice; mp != nil {
		rc := o.Model.RateCard
		for _, d := range []struct {
			name  string
			cap   *uint64
			price uint64
		}{{"prompt", mp.Prompt, perMillion(rc.InputTokens)}, {"completion", mp.Completion, perMillion(rc.OutputTokens)}, {"request", mp.Request, rc.Minimum}} {
			if d.cap != nil && d.price > *d.cap {
				return fmt.Sprintf("max_price.%s: %d micro-units over the cap of %d", d.name, d.price, *d.cap)
			}
		}
	}
	return ""
}

// noneMeets is the 503 for a request whose preferences (and pins) left no
// provider, naming each excluded one and its reason.
func noneMeets(model string, ex []Exclusion) *Error {
	by := map[string]int{}
	for _, e := range ex {
		by[strings.SplitN(e.Reason, ":", 2)[0]]++
	}
	var parts []string
	for f, n := range by {
		parts = append(parts, fmt.Sprintf("%s removed %d", f, n))
	}
	sort.Strings(parts)
	return &Error{Status: http.StatusServiceUnavailable, Code: "no_provider", Excluded: ex, RetryAfter: time.Second,
		Message: fmt.Sprintf("no provider of %s meets the request's provider preferences (%s); tenzro.excluded names each", model, strings.Join(parts, ", "))}
}

// strategyFor is the strategy a preference's sort stands for; throughput
// has none (ranked after, by throughputFirst).
func strategyFor(req *Request) string {
	if p := req.Prefs; p != nil && (p.Sort == prefs.SortPrice || p.Sort == prefs.SortLatency) {
		return string(p.Sort)
	}
	return req.Strategy
}

// arrangeByPrefs reorders a ranking by the preferences: sort by
// throughput; providers measured worse than a preferred cutoff to the
// back; the ordered providers first, in the buyer's order; and without
// fallbacks, nothing beyond the ordered (or only) set, or beyond the first.
func (g *Gateway) arrangeByPrefs(p *prefs.Preferences, cands []strategy.Candidate, choices map[peer.ID]choice) []strategy.Candidate {
	if p == nil {
		return cands
	}
	out := slices.Clone(cands)
	if p.Sort == prefs.SortThroughput {
		sort.SliceStable(out, func(i, j int) bool {
			a, b := g.throughput.get(out[i].Peer), g.throughput.get(out[j].Peer)
			return a.known() && (!b.known() || a.rate > b.rate)
		})
	}
	if p.PreferredMinThroughput != nil || p.PreferredMaxLatency != nil {
		sort.SliceStable(out, func(i, j int) bool { return g.meetsPreferred(p, out[i]) && !g.meetsPreferred(p, out[j]) })
	}
	if len(p.Order) > 0 {
		rank := func(c strategy.Candidate) int {
			ch := choices[c.Peer]
			if i := slices.IndexFunc(p.Order, func(e string) bool { return namesOffer(e, ch.offer, ch.operator) }); i >= 0 {
				return i
			}
			return len(p.Order)
		}
		sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	}
	if !p.Fallbacks() && len(p.Order) == 0 && len(p.Only) == 0 && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// meetsPreferred reports whether the router's own figures for c meet the
// preferred cutoffs; a provider not yet measured is given the benefit.
func (g *Gateway) meetsPreferred(p *prefs.Preferences, c strategy.Candidate) bool {
	if t := g.throughput.get(c.Peer); t.known() {
		if v, ok := p.PreferredMinThroughput.Typical(); ok && t.rate < v {
			return false
		}
		if v, ok := p.PreferredMinThroughput.Tail(); ok && t.rate < v {
			return false
		}
	}
	if c.LatencyKnown {
		if v, ok := p.PreferredMaxLatency.Typical(); ok && c.Mean.Seconds() > v {
			return false
		}
		if v, ok := p.PreferredMaxLatency.Tail(); ok && c.P95.Seconds() > v {
			return false
		}
	}
	return true
}

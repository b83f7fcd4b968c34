package scale

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricefeed"
	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/strategy"
)

var pricefeedAll = pricefeed.Filter{}

// heapInUse is the live heap after a collection.
func heapInUse() (bytes, mallocs uint64) {
	// Twice: the market's goroutines release their buffers as they wind
	// down, and a second cycle collects what the first one's finalizers
	// freed.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.Mallocs
}

// measureState feeds one provider table and one set of topic validators
// every provider's messages on this goroutine alone, after the market's
// loops stopped: what a node holds per provider, what admitting a provider
// costs (its certificate is verified once), and what one steady-state
// heartbeat costs to validate at this size. It returns the table, every
// provider up, for measureQuotes.
func measureState(mk *market, res *Result) (*router.Table, error) {
	n := len(mk.providers)
	anns := make([][]byte, n)
	beats := make([][]byte, n)
	for i, p := range mk.providers {
		now := time.Now()
		an := p.an
		an.Seq, an.TimeMs = p.nextSeq(now), now.UnixMilli()
		var err error
		if anns[i], err = seal(p.m, gossip.KindAnnounce, &an); err != nil {
			return nil, err
		}
		hb := p.heartbeat(now)
		hb.Seq = p.nextSeq(now)
		if beats[i], err = seal(p.m, gossip.KindHeartbeat, hb); err != nil {
			return nil, err
		}
	}
	// One stopped clock for the validator and the tables: on a loaded
	// machine admitting 1,000 providers takes longer than a heartbeat's
	// life, and the quotes need every provider up.
	clk := clock.NewMock()
	clk.Set(time.Now())
	v := gossip.NewValidator(network, 0, clk, gossip.NewFirstSeenPins())
	t := router.NewTable(clk, quiet)
	h0, _ := heapInUse()
	start := time.Now()
	for i := range n {
		ra := v.ValidateAnnouncement(context.Background(), mk.providers[i].m.peer, anns[i])
		rh := v.ValidateHeartbeat(context.Background(), mk.providers[i].m.peer, beats[i])
		if ra.Verdict != gossip.Accept || rh.Verdict != gossip.Accept {
			return nil, fmt.Errorf("scale: provider %d not admitted: %w %w", i, ra.Err, rh.Err)
		}
		ann, okA := ra.Value.(*gossip.VerifiedAnnouncement)
		beat, okH := rh.Value.(*gossip.VerifiedHeartbeat)
		if !okA || !okH {
			return nil, fmt.Errorf("scale: provider %d: accepted messages of types %T and %T", i, ra.Value, rh.Value)
		}
		t.ApplyAnnouncement(ann)
		t.ApplyHeartbeat(beat)
	}
	res.Admit = time.Since(start) / time.Duration(n)
	h1, _ := heapInUse()
	// The table's share alone: copies fed freshly decoded messages (as the
	// validators hand on), enough of them that the figure stands above the
	// collector's noise at small sizes.
	reps := max(2, 10000/n)
	tables := make([]*router.Table, reps)
	h2, _ := heapInUse()
	for r := range tables {
		tables[r] = router.NewTable(clk, quiet)
		for i, p := range mk.providers {
			va, vh, err := decoded(p, anns[i], beats[i], clk.Now())
			if err != nil {
				return nil, err
			}
			tables[r].ApplyAnnouncement(va)
			tables[r].ApplyHeartbeat(vh)
		}
	}
	h3, _ := heapInUse()
	res.TableBytes = (int64(h3) - int64(h2)) / int64(reps)
	res.ValidatorStateBytes = max(0, int64(h1)-int64(h0)-res.TableBytes)
	runtime.KeepAlive(tables)
	runtime.KeepAlive(anns)

	for i, p := range mk.providers {
		now := time.Now()
		hb := p.heartbeat(now)
		hb.Seq = p.nextSeq(now)
		var err error
		if beats[i], err = seal(p.m, gossip.KindHeartbeat, hb); err != nil {
			return nil, err
		}
	}
	_, m0 := heapInUse()
	start = time.Now()
	for i := range n {
		if r := v.ValidateHeartbeat(context.Background(), mk.providers[i].m.peer, beats[i]); r.Verdict != gossip.Accept {
			return nil, fmt.Errorf("scale: heartbeat %d: %w", i, r.Err)
		}
	}
	res.Heartbeat = time.Since(start) / time.Duration(n)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeartbeatAllocs = float64(ms.Mallocs-m0) / float64(n)
	return t, nil
}

// decoded is what the validators hand the table for one provider's
// messages: the payloads decoded afresh, with the proven sender.
func decoded(p *simProvider, ann, beat []byte, now time.Time) (*gossip.VerifiedAnnouncement, *gossip.VerifiedHeartbeat, error) {
	snd := gossip.Sender{Peer: p.m.peer, Machine: p.m.machine, Backend: "software", Received: now}
	va := &gossip.VerifiedAnnouncement{Sender: snd}
	vh := &gossip.VerifiedHeartbeat{Sender: snd}
	for _, d := range []struct {
		data []byte
		into any
	}{{ann, &va.Announcement}, {beat, &vh.Heartbeat}} {
		env, err := identity.UnmarshalEnvelope(d.data, len(d.data))
		if err != nil {
			return nil, nil, fmt.Errorf("scale: decode: %w", err)
		}
		if err := cborx.UnmarshalCanonical(env.Payload, len(env.Payload), d.into); err != nil {
			return nil, nil, fmt.Errorf("scale: decode payload: %w", err)
		}
	}
	return va, vh, nil
}

// surcharges are the gateway's defaults (gateway.DefaultConfig).
var surcharges = pricing.Surcharges{None: 0, Receipt: 1, Optimistic: 5, TEE: 20}

// measureQuotes quotes and ranks requests for the popular model (offered
// by every provider) as the gateway does for each request: the table's
// offers of the catalog ID, a signed-digest quote per warm offer at the
// request's level, and the weighted ranking.
func measureQuotes(t *router.Table, rounds int, res *Result) error {
	sel, err := strategy.New(strategy.DefaultWeights, nil)
	if err != nil {
		return err
	}
	id := modelID(popularModel)
	units := pricing.Units{InputTokens: 200, OutputTokens: 256}
	quotes := make([]time.Duration, 0, rounds)
	var rank time.Duration
	for range rounds {
		start := time.Now()
		var cands []strategy.Candidate
		now := time.Now()
		for _, o := range t.OffersOf(id) {
			if o.State != gossip.StateWarm || !o.Serves(terms.VerifyReceipt) {
				continue
			}
			q, err := pricing.NewQuote(o.Peer, o.Machine, id, o.Model.RateCard, units, terms.VerifyReceipt, surcharges, now.Add(router.QuoteTTL), pricing.Digest{})
			if err != nil {
				continue
			}
			cands = append(cands, strategy.Candidate{Peer: o.Peer, Price: q.Breakdown.Total, Standing: 5000,
				InFlight: o.InFlight, Capacity: o.Capacity, Up: o.Status == router.StatusUp, BreakerReady: true})
		}
		mid := time.Now()
		if _, err := sel.Rank(strategy.Weighted, cands, strategy.Filter{}); err != nil {
			return fmt.Errorf("scale: rank: %w", err)
		}
		rank += time.Since(mid)
		quotes = append(quotes, mid.Sub(start))
		res.Candidates = len(cands)
	}
	slices.Sort(quotes)
	var sum time.Duration
	for _, q := range quotes {
		sum += q
	}
	res.QuoteMean = sum / time.Duration(rounds)
	res.QuoteP99 = quotes[min(len(quotes)-1, len(quotes)*99/100)]
	res.RankMean = rank / time.Duration(rounds)
	return nil
}

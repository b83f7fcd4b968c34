package router

import (
	"fmt"
	"sort"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// QuoteTTL is how long a quote's price holds.
const QuoteTTL = 60 * time.Second

// QuoteLine is one provider's quote as tenzro_quoteInference lists it.
type QuoteLine struct {
	Provider   string            `json:"provider"`
	MachineID  string            `json:"machine_id"`
	KeyBackend string            `json:"key_backend"`
	Region     string            `json:"region"`
	Model      string            `json:"model"`
	ModelID    string            `json:"model_id"`
	Status     Status            `json:"status"`
	InFlight   uint32            `json:"in_flight"`
	Capacity   uint32            `json:"capacity"`
	QueueDepth uint32            `json:"queue_depth"`
	Breakdown  pricing.Breakdown `json:"breakdown"`
	Surcharge  uint64            `json:"surcharge"`
	Price      uint64            `json:"price"`
	Digest     pricing.Digest    `json:"quote_digest"`
	Expires    time.Time         `json:"expires"`
	Quote      pricing.Quote     `json:"-"`
	Attested   *AttestedView     `json:"attested,omitempty"` // the provider's verified TEE attestation, if any
}

// Quotes prices units at verification level at every provider that is up,
// has the model warm, offers the level and is registered (where a chain
// tells), cheapest first (ties by load,
// then peer ID). Providers whose price overflows are left out.
func (t *Table) Quotes(model string, units pricing.Units, level terms.Verification, s pricing.Surcharges) ([]QuoteLine, error) {
	return t.quote(t.Offers(model), units, level, s)
}

// QuotesOf is Quotes for the offers of exactly one catalog ID, whatever
// names they are announced under.
func (t *Table) QuotesOf(id [32]byte, units pricing.Units, level terms.Verification, s pricing.Surcharges) ([]QuoteLine, error) {
	return t.quote(t.OffersOf(id), units, level, s)
}

func (t *Table) quote(offers []Offer, units pricing.Units, level terms.Verification, s pricing.Surcharges) ([]QuoteLine, error) {
	if _, err := s.For(level); err != nil {
		return nil, fmt.Errorf("router: quote: %w", err)
	}
	now := t.clock.Now()
	out := []QuoteLine{}
	for _, o := range offers {
		// An unregistered provider is routed to only when a request opts
		// in: it is not quoted as a market offer; a barred one never.
		if o.Status != StatusUp || o.State != "warm" || !o.Serves(level) || o.Unregistered || o.Barred {
			continue
		}
		var id [32]byte
		copy(id[:], o.Model.ModelID)
		q, err := pricing.NewQuote(o.Peer, o.Machine, id, o.Model.RateCard, units, level, s, now.Add(QuoteTTL), pricing.Digest{})
		if err != nil {
			continue
		}
		out = append(out, QuoteLine{
			Provider: o.Peer.String(), MachineID: o.Machine.String(), KeyBackend: o.Backend, Region: o.Region,
			Model: o.Model.Name, ModelID: fmt.Sprintf("%x", o.Model.ModelID), Status: o.Status,
			InFlight: o.InFlight, Capacity: o.Capacity, QueueDepth: o.QueueDepth,
			Breakdown: q.Breakdown, Surcharge: q.Breakdown.Surcharge, Price: q.Breakdown.Total,
			Digest: q.Digest, Expires: q.Expiry.UTC(), Quote: q, Attested: attestedView(o.Attested),
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Price != b.Price {
			return a.Price < b.Price
		}
		if a.InFlight != b.InFlight {
			return a.InFlight < b.InFlight
		}
		return a.Provider < b.Provider
	})
	return out, nil
}

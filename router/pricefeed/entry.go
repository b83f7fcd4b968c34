package pricefeed

import (
	"encoding/hex"
	"math"
	"sort"
)

// Entry is the feed of one provider's model over one window. The observed
// columns (everything but Claims) come only from validators' observations.
type Entry struct {
	Provider    string `json:"provider"`
	MachineID   string `json:"machine_id"`
	Model       string `json:"model"`
	WindowStart int64  `json:"window_start_ms"`
	WindowEnd   int64  `json:"window_end_ms"`
	Attested    bool   `json:"attested"`
	// Observers are the distinct validator accounts (hex) that observed.
	Observers []string `json:"observers"`
	Count     int      `json:"count"`
	// SuccessRate is successful calls over all observed calls.
	SuccessRate float64 `json:"success_rate"`
	// PricePerUnit is micro-units charged per billed token (input +
	// output), over successful calls that billed tokens.
	PricePerUnitP50 float64 `json:"price_per_unit_p50"`
	PricePerUnitP95 float64 `json:"price_per_unit_p95"`
	// LatencyP50/P95 are over successful calls, in ms on the observers'
	// clocks.
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP95Ms float64 `json:"latency_p95_ms"`
	// Claims is what the provider says of itself, unchecked.
	Claims *Claims `json:"provider_claims,omitempty"`
}

// Claims are the provider's own statements, shown beside the feed.
type Claims struct {
	HardwareClass Claim `json:"hardware_class"`
	Region        Claim `json:"region"`
}

// Claim is one value the provider claims; Claimed is always true.
type Claim struct {
	Value   string `json:"value"`
	Claimed bool   `json:"claimed"`
}

func (f *Feed) entry(k key, b *bucket) Entry {
	e := Entry{Provider: k.provider, MachineID: b.machine, Model: k.model, WindowStart: k.window,
		WindowEnd: k.window + f.window.Milliseconds(), Attested: len(b.observers) >= MinObservers, Count: b.total}
	for o := range b.observers {
		e.Observers = append(e.Observers, hex.EncodeToString(o[:]))
	}
	sort.Strings(e.Observers)
	var unit, lat []float64
	ok := 0
	for _, s := range b.samples {
		if !s.success {
			continue
		}
		ok++
		lat = append(lat, float64(s.latencyMs))
		if s.tokens > 0 {
			unit = append(unit, float64(s.price)/float64(s.tokens))
		}
	}
	if n := len(b.samples); n > 0 {
		e.SuccessRate = float64(ok) / float64(n)
	}
	e.PricePerUnitP50, e.PricePerUnitP95 = quantile(unit, 0.5), quantile(unit, 0.95)
	e.LatencyP50Ms, e.LatencyP95Ms = quantile(lat, 0.5), quantile(lat, 0.95)
	return e
}

// quantile is the nearest-rank q-quantile of xs (0 when empty); it sorts xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

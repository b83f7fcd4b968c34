package pricefeed

import (
	"github.com/prometheus/client_golang/prometheus"
)

var (
	labels       = []string{"provider", "model"}
	descUnit     = prometheus.NewDesc("tenzro_pricefeed_price_per_unit", "Observed micro-units charged per billed token, by quantile.", append(labels, "quantile"), nil)
	descLatency  = prometheus.NewDesc("tenzro_pricefeed_latency_ms", "Observed latency of successful calls in ms, by quantile.", append(labels, "quantile"), nil)
	descSuccess  = prometheus.NewDesc("tenzro_pricefeed_success_rate", "Observed success rate.", labels, nil)
	descCount    = prometheus.NewDesc("tenzro_pricefeed_observations", "Observations in the entry's window.", labels, nil)
	descObserver = prometheus.NewDesc("tenzro_pricefeed_observers", "Distinct validators that observed in the window.", labels, nil)
	descAttested = prometheus.NewDesc("tenzro_pricefeed_attested", "1 when at least two validators observed in the window.", labels, nil)
)

// Describe implements prometheus.Collector.
func (f *Feed) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUnit, descLatency, descSuccess, descCount, descObserver, descAttested} {
		ch <- d
	}
}

// Collect exports the feed's entries as gauges.
func (f *Feed) Collect(ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	for _, e := range f.Query(Filter{}) {
		p, m := e.Provider, e.Model
		g(descUnit, e.PricePerUnitP50, p, m, "0.5")
		g(descUnit, e.PricePerUnitP95, p, m, "0.95")
		g(descLatency, e.LatencyP50Ms, p, m, "0.5")
		g(descLatency, e.LatencyP95Ms, p, m, "0.95")
		g(descSuccess, e.SuccessRate, p, m)
		g(descCount, float64(e.Count), p, m)
		g(descObserver, float64(len(e.Observers)), p, m)
		attested := 0.0
		if e.Attested {
			attested = 1
		}
		g(descAttested, attested, p, m)
	}
}

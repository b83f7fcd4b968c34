package pricefeed

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The feed's figures per provider and model. Its entries carry two
// quantiles and a count but no sum, so they are not a Prometheus summary:
// each quantile is a gauge of its own, in base units (seconds), and a
// "quantile" label (reserved for summaries) is not used.
var (
	labels       = []string{"provider", "model"}
	descPriceP50 = prometheus.NewDesc("tenzro_pricefeed_price_p50_micro_units", "Median micro-units charged per billed token, over the window's successful calls that billed tokens.", labels, nil)
	descPriceP95 = prometheus.NewDesc("tenzro_pricefeed_price_p95_micro_units", "95th percentile of micro-units charged per billed token, over the window's successful calls that billed tokens.", labels, nil)
	descLatP50   = prometheus.NewDesc("tenzro_pricefeed_latency_p50_seconds", "Median latency of the window's successful calls, on the observers' clocks.", labels, nil)
	descLatP95   = prometheus.NewDesc("tenzro_pricefeed_latency_p95_seconds", "95th percentile latency of the window's successful calls, on the observers' clocks.", labels, nil)
	descSuccess  = prometheus.NewDesc("tenzro_pricefeed_success_ratio", "Successful calls over all observed calls in the window (0 to 1).", labels, nil)
	descCount    = prometheus.NewDesc("tenzro_pricefeed_observations", "Observations in the entry's window.", labels, nil)
	descObserver = prometheus.NewDesc("tenzro_pricefeed_observers", "Distinct validators that observed in the window.", labels, nil)
	descAttested = prometheus.NewDesc("tenzro_pricefeed_attested", "1 when at least two validators observed in the window.", labels, nil)
)

// Describe implements prometheus.Collector.
func (f *Feed) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPriceP50, descPriceP95, descLatP50, descLatP95, descSuccess, descCount, descObserver, descAttested} {
		ch <- d
	}
}

// Collect exports the feed's entries as gauges. An entry without a
// successful call has observed no price and no latency: those series are
// left out rather than exported as 0, which a dashboard would plot as a
// free, instant provider.
func (f *Feed) Collect(ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	for _, e := range f.Query(Filter{}) {
		p, m := e.Provider, e.Model
		if e.SuccessRate > 0 {
			g(descPriceP50, e.PricePerUnitP50, p, m)
			g(descPriceP95, e.PricePerUnitP95, p, m)
			g(descLatP50, e.LatencyP50Ms/1000, p, m)
			g(descLatP95, e.LatencyP95Ms/1000, p, m)
		}
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

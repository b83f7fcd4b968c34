package consensus

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterHealthMetrics exports the chain watchdog's view of c: whether
// the chain is stalled, how many CometBFT peers are connected and how many
// persistent peers the watchdog redialled.
func RegisterHealthMetrics(reg prometheus.Registerer, c *Node) error {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, col := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tenzro_chain_stalled",
			Help: "1 while the chain height has not moved for longer than its stall threshold"},
			func() float64 { return b(c.Health().Stalled) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tenzro_chain_peers", Help: "connected CometBFT peers"},
			func() float64 { return float64(c.Health().Peers) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tenzro_chain_missing_peers",
			Help: "persistent peers that are not connected"},
			func() float64 { return float64(c.Health().Missing) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tenzro_chain_redials_total",
			Help: "persistent peers the chain watchdog redialled"},
			func() float64 { return float64(c.Health().Redials) }),
	} {
		if err := reg.Register(col); err != nil {
			return fmt.Errorf("consensus: chain health metrics: %w", err)
		}
	}
	return nil
}

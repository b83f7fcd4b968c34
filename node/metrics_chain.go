package node

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
)

// registerChainHeight exports the height of the newest block the node's
// chain has committed: with tenzro_chain_stalled it shows a dashboard
// whether the chain moves and how far each node is behind the others.
func registerChainHeight(reg prometheus.Registerer, c *consensus.Node) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tenzro_chain_height",
		Help: "Height of the newest block this node's chain has committed."},
		func() float64 { return float64(c.Health().Height) })
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("node: chain height metric: %w", err)
	}
	return nil
}

package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// dtoMetric reads a counter's value back for the JSON-RPC snapshot.
type dtoMetric struct{ m dto.Metric }

func (d *dtoMetric) read(c prometheus.Counter) uint64 {
	if err := c.Write(&d.m); err != nil || d.m.Counter == nil {
		return 0
	}
	return uint64(d.m.Counter.GetValue())
}

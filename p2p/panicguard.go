package p2p

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// PanicGuard isolates stream handlers: libp2p runs each handler on its
// own goroutine, where a panic would end the process. A guarded handler's
// panic is logged and counted by protocol, and its stream reset; the node
// keeps serving.
type PanicGuard struct {
	panics *prometheus.CounterVec
	log    *slog.Logger
}

// NewPanicGuard registers tenzro_p2p_stream_handler_panics_total on reg (a
// private registry when nil); guards sharing a registry share the series.
// A foreign collector under that name is logged, and the guard counts
// apart from reg: isolation must not depend on the metrics.
func NewPanicGuard(reg prometheus.Registerer, log *slog.Logger) *PanicGuard {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "p2p",
		Name: "stream_handler_panics_total", Help: "Stream handlers that panicked and were recovered, by protocol."}, []string{"protocol"})
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		old, ok := c, false
		if errors.As(err, &are) {
			old, ok = are.ExistingCollector.(*prometheus.CounterVec)
		}
		if ok {
			c = old
		} else {
			log.Error("p2p: panic guard metrics not registered", "err", err)
		}
	}
	return &PanicGuard{panics: c, log: log}
}

// Wrap returns handle under the guard.
func (g *PanicGuard) Wrap(proto protocol.ID, handle network.StreamHandler) network.StreamHandler {
	return func(s network.Stream) {
		defer func() {
			if p := recover(); p != nil {
				g.panics.WithLabelValues(string(proto)).Inc()
				g.log.Error("stream handler panicked", "protocol", proto, "peer", s.Conn().RemotePeer(), "panic", p, "stack", string(debug.Stack()))
				_ = s.Reset()
			}
		}()
		handle(s)
	}
}

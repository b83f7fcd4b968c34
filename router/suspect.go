package router

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// A provider killed outright stops heartbeating, but the table calls it
// down only DownAfter later; a request sent meanwhile went to it and
// waited. Its connections closing is the first sign, seconds earlier:
// the provider is then suspected. Suspicion does not take it down (a
// connection also closes when the connection manager trims it, or on a
// network blip): routing tries a suspected provider after the others,
// and the heartbeats still decide "down". It lifts when the provider is
// connected again or a heartbeat arrives after it.

// Suspect marks p suspected from now on; an unknown p is ignored.
func (t *Table) Suspect(p peer.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.providers[p]; ok {
		e.suspected = t.clock.Now()
	}
}

// Clear lifts p's suspicion: it is connected again.
func (t *Table) Clear(p peer.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.providers[p]; ok {
		e.suspected = time.Time{}
	}
}

// Suspected reports whether p is suspected: its connections closed and
// neither a new one nor a heartbeat came since.
func (t *Table) Suspected(p peer.ID) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.providers[p]
	return ok && !e.suspected.IsZero() && !e.lastBeat.After(e.suspected)
}

// ConnWatch suspects a provider as soon as this node's last connection to
// it closes, and clears it when one opens. Start and Stop give it a
// node's lifecycle.
type ConnWatch struct {
	net   network.Network
	table *Table
	n     *network.NotifyBundle
}

// NewConnWatch watches n's connections for t.
func NewConnWatch(n network.Network, t *Table) *ConnWatch {
	w := &ConnWatch{net: n, table: t}
	w.n = &network.NotifyBundle{
		ConnectedF: func(_ network.Network, c network.Conn) { t.Clear(c.RemotePeer()) },
		DisconnectedF: func(n network.Network, c network.Conn) {
			// Another connection to the peer (a second transport, a
			// simultaneous dial) still reaches it.
			if p := c.RemotePeer(); n.Connectedness(p) != network.Connected {
				t.Suspect(p)
			}
		},
	}
	return w
}

// Start begins watching.
func (w *ConnWatch) Start(context.Context) error {
	w.net.Notify(w.n)
	return nil
}

// Stop ends the watch.
func (w *ConnWatch) Stop(context.Context) error {
	w.net.StopNotify(w.n)
	return nil
}

package p2p

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// Start dials the bootstrap peers concurrently, each bounded by a dial
// timeout (5 s), and bootstraps the DHT.
//
// Unreachable bootstrap peers do not fail Start: nodes of a network start in
// any order (the first validator of a devnet has nobody to reach), so
// failures are logged and, while the host has neither a DHT peer nor a
// bootstrap peer, a background loop dials the bootstrap peers again every
// few seconds. Start
// fails only if called twice or after Stop, or if ctx ends first; in that
// last case the Host is started and must still be stopped.
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	switch h.state {
	case stateStarted:
		h.mu.Unlock()
		return errors.New("p2p: host already started")
	case stateStopped:
		h.mu.Unlock()
		return ErrStopped
	}
	h.state = stateStarted
	runCtx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.mu.Unlock()

	h.dhtBootstrap.Store(true)
	ok := h.connectBootstrap(ctx)
	h.log.Info("p2p bootstrap", "connected", ok, "configured", len(h.bootstrap))
	if err := h.dht.Bootstrap(ctx); err != nil {
		h.log.Warn("dht bootstrap failed", "err", err)
	}
	h.wg.Add(2)
	go h.reconnectLoop(runCtx)
	go h.provideLoop(runCtx)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("p2p: start: %w", err)
	}
	return nil
}

// Stop ends the background loops and closes the DHT and the host. It is
// idempotent; ctx bounds the wait for the background loops.
func (h *Host) Stop(ctx context.Context) error {
	h.mu.Lock()
	if h.state == stateStopped {
		h.mu.Unlock()
		return nil
	}
	h.state = stateStopped
	cancel := h.cancel
	h.mu.Unlock()

	h.dhtBootstrap.Store(false)
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	var errs []error
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("p2p: stop: waiting for background loops: %w", ctx.Err()))
	}
	if err := h.dht.Close(); err != nil {
		errs = append(errs, fmt.Errorf("p2p: close dht: %w", err))
	}
	if err := h.host.Close(); err != nil {
		errs = append(errs, fmt.Errorf("p2p: close host: %w", err))
	}
	h.log.Info("p2p host stopped")
	return errors.Join(errs...)
}

// connectBootstrap dials every bootstrap peer concurrently and returns how
// many are connected afterwards.
func (h *Host) connectBootstrap(ctx context.Context) int {
	var ok atomic.Int32
	var wg sync.WaitGroup
	for _, ai := range h.bootstrap {
		if h.host.Network().Connectedness(ai.ID) == network.Connected {
			ok.Add(1)
			continue
		}
		wg.Add(1)
		go func(ai peer.AddrInfo) {
			defer wg.Done()
			// A failed dial puts the peer in the swarm's dial back-off
			// (5 s and growing); bootstrap retries must really dial.
			if sw, isSwarm := h.host.Network().(*swarm.Swarm); isSwarm {
				sw.Backoff().Clear(ai.ID)
			}
			dctx, cancel := context.WithTimeout(ctx, h.t.dialTimeout)
			defer cancel()
			dctx = network.WithDialPeerTimeout(dctx, h.t.dialTimeout)
			start := time.Now()
			if err := h.host.Connect(dctx, ai); err != nil {
				h.log.Warn("bootstrap dial failed", "bootstrap", ai.ID.String(),
					"addrs", fmt.Sprint(ai.Addrs), "took", time.Since(start).Round(time.Millisecond), "err", err)
				return
			}
			ok.Add(1)
			h.log.Debug("bootstrap peer connected", "bootstrap", ai.ID.String())
		}(ai)
	}
	wg.Wait()
	return int(ok.Load())
}

// reconnectLoop redials the bootstrap peers while the host is cut off from
// the DHT (empty routing table and no bootstrap peer connected), then
// re-bootstraps the DHT and hurries pending provides.
func (h *Host) reconnectLoop(ctx context.Context) {
	defer h.wg.Done()
	if len(h.bootstrap) == 0 {
		return
	}
	t := time.NewTicker(h.t.retryInterval)
	defer t.Stop()
	isolated := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !h.cutOff() {
			isolated = false
			continue
		}
		if !isolated {
			h.log.Warn("not connected to the DHT; retrying bootstrap peers",
				"every", h.t.retryInterval.String(), "peers", len(h.host.Network().Peers()))
			isolated = true
		}
		if n := h.connectBootstrap(ctx); n > 0 {
			h.log.Info("reconnected to bootstrap peers", "connected", n)
			isolated = false
			if err := h.dht.Bootstrap(ctx); err != nil {
				h.log.Warn("dht bootstrap failed", "err", err)
			}
			h.retryFailedProvides()
		}
	}
}

// cutOff reports whether the host has no DHT peer and no bootstrap peer:
// connected at most to clients, which cannot route queries.
func (h *Host) cutOff() bool {
	if h.dht.RoutingTable().Size() > 0 {
		return false
	}
	for _, ai := range h.bootstrap {
		if h.host.Network().Connectedness(ai.ID) == network.Connected {
			return false
		}
	}
	return true
}

// PeerInfo describes one connected peer.
type PeerInfo struct {
	ID peer.ID `json:"id"`
	// Addrs are the remote addresses of the open connections.
	Addrs []string `json:"addrs"`
	// Relayed: every open connection runs through a circuit relay.
	Relayed bool `json:"relayed"`
	// Direction of the oldest open connection: "inbound" or "outbound".
	Direction string `json:"direction"`
	// Latency is the peerstore's moving average round-trip time (ping,
	// DHT queries); zero when not measured yet.
	Latency time.Duration `json:"latency_ns"`
	// AgentVersion and Protocols come from identify; empty until it ran.
	AgentVersion string   `json:"agent_version,omitempty"`
	Protocols    []string `json:"protocols,omitempty"`
}

// Peers lists the connected peers, sorted by ID.
func (h *Host) Peers() []PeerInfo {
	ps := h.host.Peerstore()
	var out []PeerInfo
	for _, p := range h.host.Network().Peers() {
		conns := h.host.Network().ConnsToPeer(p)
		if len(conns) == 0 {
			continue
		}
		sort.Slice(conns, func(i, j int) bool { return conns[i].Stat().Opened.Before(conns[j].Stat().Opened) })
		info := PeerInfo{
			ID:        p,
			Direction: strings.ToLower(conns[0].Stat().Direction.String()),
			Latency:   ps.LatencyEWMA(p),
			Relayed:   RelayedTo(h.host, p),
		}
		for _, c := range conns {
			info.Addrs = append(info.Addrs, c.RemoteMultiaddr().String())
		}
		if v, err := ps.Get(p, "AgentVersion"); err == nil {
			if s, ok := v.(string); ok {
				info.AgentVersion = s
			}
		}
		if protos, err := ps.GetProtocols(p); err == nil {
			for _, pr := range protos {
				info.Protocols = append(info.Protocols, string(pr))
			}
			sort.Strings(info.Protocols)
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

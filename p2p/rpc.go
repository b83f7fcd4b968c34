package p2p

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node/rpc"
)

// PeerView is one connected peer in tenzro_listPeers.
type PeerView struct {
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Direction string   `json:"direction"`
	LatencyMs float64  `json:"latency_ms"`
	Agent     string   `json:"agent,omitempty"`
	// Relayed: every open connection to it runs through a circuit relay
	// (a provider behind a NAT hole punching could not pass).
	Relayed bool `json:"relayed"`
}

// FindParams are tenzro_findProviders' parameters.
type FindParams struct {
	Model string `json:"model"`
	Max   int    `json:"max"`
}

// FoundProvider is one DHT result.
type FoundProvider struct {
	PeerID string   `json:"peer_id"`
	Addrs  []string `json:"addrs"`
}

// API contributes the host's methods: tenzro_listPeers and
// tenzro_findProviders.
type API struct {
	Host *Host
	// OnFound, if set, learns each provider a DHT search finds (the
	// router's table adds it).
	OnFound func(ai peer.AddrInfo, model [32]byte)
}

// RegisterRPC contributes tenzro_listPeers and tenzro_findProviders.
func (a API) RegisterRPC(r rpc.Registry) {
	r.Register("tenzro_listPeers", func(context.Context, json.RawMessage) (any, error) {
		out := []PeerView{}
		for _, p := range a.Host.Peers() {
			out = append(out, PeerView{PeerID: p.ID.String(), Addrs: p.Addrs, Direction: p.Direction,
				LatencyMs: float64(p.Latency.Microseconds()) / 1000, Agent: p.AgentVersion, Relayed: p.Relayed})
		}
		return out, nil
	})
	r.Register("tenzro_findProviders", a.findProviders)
}

func (a API) findProviders(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[FindParams](raw)
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(p.Model)
	if err != nil || len(b) != 32 {
		return nil, rpc.InvalidParams("model: %q is not a 64-hex-digit catalog model ID", p.Model)
	}
	var id [32]byte
	copy(id[:], b)
	if p.Max <= 0 || p.Max > 100 {
		p.Max = 20
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	found, err := a.Host.FindModelProviders(ctx, id, p.Max)
	if err != nil {
		return nil, rpc.Unavailable("dht: %v", err)
	}
	out := []FoundProvider{}
	for _, ai := range found {
		if a.OnFound != nil {
			a.OnFound(ai, id)
		}
		fp := FoundProvider{PeerID: ai.ID.String(), Addrs: []string{}}
		for _, a := range ai.Addrs {
			fp.Addrs = append(fp.Addrs, a.String())
		}
		out = append(out, fp)
	}
	return out, nil
}

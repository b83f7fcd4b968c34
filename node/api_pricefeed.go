package node

import (
	"github.com/libp2p/go-libp2p/core/peer"

	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// PriceFeedParams are tenzro_getPriceFeed's parameters; both optional.
type PriceFeedParams struct {
	Model    string `json:"model"`    // a model name or hex catalog ID (prefix)
	Provider string `json:"provider"` // a provider peer ID
}

// PriceFeedResult is tenzro_getPriceFeed's result.
type PriceFeedResult struct {
	WindowMs     int64             `json:"window_ms"`
	MinObservers int               `json:"min_observers"`
	Entries      []pricefeed.Entry `json:"entries"`
}

// feedAPI is the price feed's part of the API.
type feedAPI struct {
	feed  *pricefeed.Feed
	table *router.Table
}

// RegisterRPC contributes tenzro_getPriceFeed.
func (n feedAPI) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getPriceFeed", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[PriceFeedParams](raw)
		if err != nil {
			return nil, err
		}
		return n.priceFeed(p), nil
	})
}

func (n feedAPI) priceFeed(p PriceFeedParams) PriceFeedResult {
	flt := pricefeed.Filter{Provider: p.Provider, Model: strings.ToLower(p.Model)}
	if p.Model != "" && !isHex(flt.Model) {
		flt.Model = n.modelIDOf(p.Model)
	}
	es := n.feed.Query(flt)
	if es == nil {
		es = []pricefeed.Entry{}
	}
	return PriceFeedResult{WindowMs: n.feed.Window().Milliseconds(), MinObservers: pricefeed.MinObservers, Entries: es}
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// modelIDOf resolves a model name to the catalog ID a provider announced
// for it; an unknown name matches nothing.
func (n feedAPI) modelIDOf(name string) string {
	for _, v := range n.table.List() {
		for _, m := range v.Models {
			if m.Name == name {
				return m.ModelID
			}
		}
	}
	return "unknown:" + name
}

// observe adds an accepted price observation to the node's feed.
func (n *Node) observe(v *gossip.VerifiedPriceObs) {
	var obs [32]byte
	copy(obs[:], v.Observer)
	n.feed.Add(pricefeed.Observation{
		Observer: obs, Provider: v.ProviderPeer, Machine: hex.EncodeToString(v.ProviderMachine), Model: hex.EncodeToString(v.ModelID),
		Price: v.Price, LatencyMs: v.LatencyMs, InputTokens: v.InputTokens, OutputTokens: v.OutputTokens,
		Success: v.Success, Time: time.UnixMilli(v.TimeMs),
	})
	if v.Success && n.gateway != nil {
		// A validator's probe that the provider answered is word of its
		// health independent of this gateway's own failed calls.
		if p, err := peer.Decode(v.ProviderPeer); err == nil {
			n.gateway.ProviderHealthy(p, time.UnixMilli(v.TimeMs))
		}
	}
}

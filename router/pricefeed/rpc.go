package pricefeed

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/router"
)

// Params are tenzro_getPriceFeed's parameters; both optional.
type Params struct {
	Model    string `json:"model"`    // a model name or hex catalog ID (prefix)
	Provider string `json:"provider"` // a provider peer ID
}

// Result is tenzro_getPriceFeed's result.
type Result struct {
	WindowMs     int64   `json:"window_ms"`
	MinObservers int     `json:"min_observers"`
	Entries      []Entry `json:"entries"`
}

// API is the price feed's part of a node's JSON-RPC API; Table resolves
// model names to the catalog IDs providers announced.
type API struct {
	Feed  *Feed
	Table *router.Table
}

// RegisterRPC contributes tenzro_getPriceFeed.
func (n API) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getPriceFeed", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[Params](raw)
		if err != nil {
			return nil, err
		}
		return n.Query(p), nil
	})
}

// Query answers tenzro_getPriceFeed.
func (n API) Query(p Params) Result {
	flt := Filter{Provider: p.Provider, Model: strings.ToLower(p.Model)}
	if p.Model != "" && !isHex(flt.Model) {
		flt.Model = n.modelIDOf(p.Model)
	}
	es := n.Feed.Query(flt)
	if es == nil {
		es = []Entry{}
	}
	return Result{WindowMs: n.Feed.Window().Milliseconds(), MinObservers: MinObservers, Entries: es}
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
func (n API) modelIDOf(name string) string {
	for _, v := range n.Table.List() {
		for _, m := range v.Models {
			if m.Name == name {
				return m.ModelID
			}
		}
	}
	return "unknown:" + name
}

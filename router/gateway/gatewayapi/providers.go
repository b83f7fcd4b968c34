package gatewayapi

import (
	"context"
	"encoding/json"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// QuoteParams are tenzro_quoteInference's parameters.
type QuoteParams struct {
	Model        string             `json:"model"`
	Units        pricing.Units      `json:"units"`
	Verification terms.Verification `json:"verification"`
}

// Providers contributes the provider table's methods: tenzro_listProviders
// and tenzro_quoteInference. A provider node has a table but no gateway.
type Providers struct {
	Table   *router.Table
	Gateway *gateway.Gateway // nil on a provider
	// Surcharges are the verification surcharges this node quotes.
	Surcharges func(context.Context) (pricing.Surcharges, error)
}

// RegisterRPC contributes tenzro_listProviders and tenzro_quoteInference.
func (a Providers) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_listProviders", func(context.Context, json.RawMessage) (any, error) {
		views := a.Table.List()
		if a.Gateway != nil {
			brs := a.Gateway.Breakers()
			for i := range views {
				if p, err := peer.Decode(views[i].PeerID); err == nil {
					if b, ok := brs[p]; ok {
						views[i].Breaker = b.State.String()
					}
				}
			}
		}
		return views, nil
	})
	s.Register("tenzro_quoteInference", a.quote)
}

func (a Providers) quote(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[QuoteParams](raw)
	if err != nil {
		return nil, err
	}
	if p.Model == "" {
		return nil, rpc.InvalidParams("model: required (a model name or hex catalog ID)")
	}
	if p.Verification == "" {
		p.Verification = terms.VerifyNone
	}
	if !p.Verification.Valid() {
		return nil, rpc.InvalidParams("verification: unknown level %q (%s)", p.Verification, terms.LevelNames())
	}
	sur, err := a.Surcharges(ctx)
	if err != nil {
		return nil, err
	}
	var lines []router.QuoteLine
	var qerr error
	if a.Gateway != nil {
		// A routing node quotes exactly the ID a request would be routed
		// to: offers of another ID under the same name are not its.
		id, err := a.Gateway.Resolve(ctx, p.Model, p.Verification)
		if err != nil {
			return nil, rpc.InvalidParams("model: %v", err)
		}
		lines, qerr = a.Table.QuotesOf(id, p.Units, p.Verification, sur)
	} else {
		lines, qerr = a.Table.Quotes(p.Model, p.Units, p.Verification, sur)
	}
	if qerr != nil {
		return nil, rpc.InvalidParams("%v", qerr)
	}
	return lines, nil
}

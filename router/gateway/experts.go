package gateway

import (
	"bytes"
	"math"
	"math/bits"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// CappedExperts names, in ReceiptInfo.Capped, expert-tokens billed below
// the receipt's claim: above the model's MoE shape × the billed tokens,
// or claimed for a model with no MoE shape (see moeShape).
const CappedExperts = "experts:moe_shape"

// capExperts bounds the expert-tokens billed for a claim: a token passes
// each of the shape's MoE layers once, where the gate picks top-k
// experts, so a call costs at most TopK × Layers × (prompt + output
// tokens + the tokens of a continued answer's earlier text, which the
// engine feeds too), counted on the tokens already billed (each capped by
// the wire) and cont, at most the bytes of the continuation text. A
// model with no shape backs no expert-tokens. Arithmetic saturates: the
// bound of an absurd count is no bound.
func capExperts(claimed uint64, shape *gossip.MoEShape, billed pricing.Units, cont uint64) (uint64, bool) {
	if claimed == 0 {
		return 0, false
	}
	var tokens, carry uint64
	for _, n := range []uint64{billed.InputTokens, billed.CachedTokens, billed.OutputTokens, cont} {
		var c uint64
		tokens, c = bits.Add64(tokens, n, 0)
		carry |= c
	}
	hi, bound := bits.Mul64(shape.ExpertsPerToken(), tokens)
	if carry != 0 || hi != 0 {
		return claimed, false
	}
	if claimed > bound {
		return bound, true
	}
	return claimed, false
}

// continuationTokens bounds the tokens of a request's continuation: its
// token IDs, or the bytes of its text (a token carries at least one).
func continuationTokens(req *infer.Request) uint64 {
	return uint64(max(len(req.ContinuationTokens), len(req.Continuation)))
}

// MoEShaper is a TokenCounter that also reads its model's MoE shape from
// the model's own file (llm.PromptTokenizer): a gateway holding the model
// bounds expert-tokens by it rather than by the provider's announced
// claim. known is false when the file states no shape it can read.
type MoEShaper interface {
	MoEShape() (layers, topK int, known bool)
}

// moeShape is the MoE shape the gateway bounds expert-tokens of model by
// at offer o: its own copy's where it holds the model, else the offer's.
func (g *Gateway) moeShape(model []byte, o router.Offer) *gossip.MoEShape {
	if len(model) == len(inference.ModelID{}) {
		if sh, ok := g.tokenizers[inference.ModelID(model)].(MoEShaper); ok {
			if layers, topK, known := sh.MoEShape(); known {
				if layers <= 0 || topK <= 0 {
					return nil // dense
				}
				return &gossip.MoEShape{Layers: uint32(min(layers, 1<<16)), TopK: uint32(min(topK, 256))}
			}
		}
	}
	return o.Model.MoE
}

// quoteUnits are the request's estimated units at offer o: for a MoE
// model, its expert-tokens at the most the gateway would bill (the
// buyer's quote prices them as a unit of the serving provider's card).
func (g *Gateway) quoteUnits(est pricing.Units, o router.Offer) pricing.Units {
	est.ExpertTokens, _ = capExperts(math.MaxUint64, g.moeShape(o.Model.ModelID, o), est, 0)
	return est
}

// expertsOf is what the buyer is shown of the holders of a verified
// call: the serving provider's list when its receipt signs it (its
// ExpertsHash) and its expert-tokens add up to the receipt's; any other
// list is the provider's error, logged and not shown (the bill rests on
// the receipt either way).
func (g *Gateway) expertsOf(p peer.ID, es []infer.ExpertUse, r *receipt.Receipt) []infer.ExpertUse {
	if len(es) == 0 {
		return nil
	}
	n, ok := infer.ExpertTokensOf(es)
	h, err := infer.ExpertsHash(es)
	if !ok || n != r.Units.ExpertTokens || err != nil || !bytes.Equal(h[:], r.ExpertsHash) {
		g.log.Warn("provider's expert holders are not the ones its receipt signs; not shown", "provider", p,
			"listed", n, "signed", r.Units.ExpertTokens, "hash_signed", len(r.ExpertsHash) > 0)
		return nil
	}
	return es
}

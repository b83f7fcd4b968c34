package provider

import (
	"net/http"
	"slices"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// constraintParams adds to an offer's params those its engine enforces
// itself: the embedded engine masks its sampling by a response format's
// or a forced tool call's grammar (inference/grammar), deterministically,
// so a committee replays it, and renders tools with the chat template.
func constraintParams(engine string, params []string) []string {
	if engine != EngineEmbedded {
		return params
	}
	out := append(slices.Clone(params), gossip.ParamResponseFormat, gossip.ParamTools)
	slices.Sort(out)
	return slices.Compact(out)
}

// refuseUnannounced refuses a request that uses a parameter the offer
// does not announce, which its engine would answer as plain text (a
// gateway routes such requests elsewhere; this holds against one that
// does not).
func refuseUnannounced(offer gossip.ModelOffer, req *infer.Request) *infer.ErrorFrame {
	for _, p := range router.NeededParams(req.Sampling) {
		if !offer.Supports(p) {
			return errFrame(http.StatusBadRequest, terms.CodeParamUnsupported, "%s is not supported by this provider's offer of %s", p, offer.Name)
		}
	}
	return nil
}

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

// refuseUnannounced refuses a malformed response format or tool list, and
// a request that uses a parameter the offer does not announce, which its engine would answer as plain text (a
// gateway routes such requests elsewhere; this holds against one that
// does not).
func refuseUnannounced(offer gossip.ModelOffer, req *infer.Request) *infer.ErrorFrame {
	// What a gateway sends is checked as its intake checked it: canonical
	// schemas, bounded tools, a choice that names a declared tool.
	s := req.Sampling
	if s.Format != nil {
		if err := s.Format.Check(); err != nil {
			return errFrame(http.StatusBadRequest, terms.CodeBadRequest, "response_format.%v", err)
		}
	}
	if len(s.Tools) > terms.MaxTools {
		return errFrame(http.StatusBadRequest, terms.CodeBadRequest, "%d tools, limit %d", len(s.Tools), terms.MaxTools)
	}
	named := s.ToolChoice != terms.ToolChoiceFunction
	for i := range s.Tools {
		if err := s.Tools[i].Check(); err != nil {
			return errFrame(http.StatusBadRequest, terms.CodeBadRequest, "tools[%d].%v", i, err)
		}
		named = named || s.Tools[i].Name == s.ToolName
	}
	if !named {
		return errFrame(http.StatusBadRequest, terms.CodeBadRequest, "tool_choice names %q, which tools do not declare", s.ToolName)
	}
	for _, p := range router.NeededParams(s) {
		if !offer.Supports(p) {
			return errFrame(http.StatusBadRequest, terms.CodeParamUnsupported, "%s is not supported by this provider's offer of %s", p, offer.Name)
		}
	}
	return nil
}

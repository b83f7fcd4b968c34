package router

import (
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// NeededParams lists the offer parameters (gossip.Param*) a request's
// sampling terms use, in a fixed order; nil for a plain request.
func NeededParams(s terms.Sampling) []string {
	var need []string
	if len(s.Tools) > 0 {
		need = append(need, gossip.ParamTools)
	}
	if s.Format != nil {
		need = append(need, gossip.ParamResponseFormat)
	}
	return need
}

// Capable returns the offers that announce every parameter s uses, so a
// request with tools or a response format never reaches a provider that
// would answer it as plain text. When none is left, lacking names the
// first parameter an offer did not announce, for the 503 that says why.
func Capable(offers []Offer, s terms.Sampling) (kept []Offer, lacking string) {
	need := NeededParams(s)
	if need == nil {
		return offers, ""
	}
	for _, o := range offers {
		missing := ""
		for _, p := range need {
			if !o.Model.Supports(p) {
				missing = p
				break
			}
		}
		if missing == "" {
			kept = append(kept, o)
		} else if lacking == "" {
			lacking = missing
		}
	}
	return kept, lacking
}

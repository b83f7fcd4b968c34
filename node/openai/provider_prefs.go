package openai

import (
	"bytes"
	"slices"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// ErrorInfo is an error body's `tenzro` object.
type ErrorInfo struct {
	// Excluded names each provider the request's preferences removed and
	// which preference did, when none was left.
	Excluded []gateway.Exclusion `json:"excluded,omitempty"`
}

func excludedInfo(ex []gateway.Exclusion) *ErrorInfo {
	if len(ex) == 0 {
		return nil
	}
	return &ErrorInfo{Excluded: ex}
}

// routing copies the request's routing fields beyond `tenzro`: the
// `provider` object, the fallback models (the request's own model and
// repeats left out), and the parameters the buyer set that the router
// cannot see in the sampling (a seed is always set, chosen when absent).
func (p *GenerationParams) routing(req *Request) {
	req.Provider = p.Provider
	for _, m := range p.Models {
		if m != p.Model && !slices.Contains(req.Models, m) {
			req.Models = append(req.Models, m)
		}
	}
	if p.Seed != nil {
		req.Params = append(req.Params, gossip.ParamSeed)
	}
}

// routingPrefs is the request's provider preferences: OpenRouter's
// top-level `provider` object (unknown fields ignored, as OpenRouter
// does) or the same fields in `tenzro` (already checked, unknown fields
// refused), not both; nil when neither says anything. max_price alone may
// come from both (X-Tenzro-Max-Price sets it in tenzro): a dimension the
// provider object leaves out is taken from tenzro.
func routingPrefs(raw []byte, inTenzro prefs.Preferences) (*prefs.Preferences, *Error) {
	given := len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null"
	if !given {
		if inTenzro.IsZero() {
			return nil, nil
		}
		return &inTenzro, nil
	}
	p, err := prefs.Parse(raw, false)
	if err != nil {
		return nil, BadRequest("provider", "provider: %v", err)
	}
	rest := inTenzro
	rest.MaxPrice = nil
	if !rest.IsZero() {
		return nil, BadRequest("provider", "give provider preferences either in provider or in tenzro, not both")
	}
	if t := inTenzro.MaxPrice; t != nil {
		if p.MaxPrice == nil {
			p.MaxPrice = &prefs.MaxPrice{}
		}
		for _, d := range []struct{ dst, src **uint64 }{{&p.MaxPrice.Prompt, &t.Prompt}, {&p.MaxPrice.Completion, &t.Completion},
			{&p.MaxPrice.Request, &t.Request}, {&p.MaxPrice.Total, &t.Total}} {
			if *d.dst == nil {
				*d.dst = *d.src
			}
		}
	}
	return p, nil
}

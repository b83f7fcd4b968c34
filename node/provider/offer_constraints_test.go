package provider

import (
	"encoding/json"
	"testing"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestConstraintParamsAndRefusals: the embedded engine announces tools
// and response_format (an upstream one neither), and a provider refuses
// what its offer does not announce, or a malformed format or tool list,
// with the code the gateway reads.
func TestConstraintParamsAndRefusals(t *testing.T) {
	if got := constraintParams(EngineEmbedded, []string{gossip.ParamLogprobs}); len(got) != 3 ||
		got[0] != gossip.ParamLogprobs || got[1] != gossip.ParamResponseFormat || got[2] != gossip.ParamTools {
		t.Fatalf("embedded params %v", got)
	}
	if got := constraintParams(EngineUpstream, nil); got != nil {
		t.Fatalf("upstream params %v", got)
	}
	embedded := gossip.ModelOffer{Name: "m", Params: constraintParams(EngineEmbedded, nil)}
	schema := json.RawMessage(`{"type":"object"}`)
	for _, c := range []struct {
		offer gossip.ModelOffer
		s     terms.Sampling
		code  string
	}{
		{embedded, terms.Sampling{}, ""},
		{embedded, terms.Sampling{Format: &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "x", Schema: schema}}, ""},
		{embedded, terms.Sampling{Tools: []terms.Tool{{Name: "f"}}, ToolChoice: terms.ToolChoiceFunction, ToolName: "f"}, ""},
		{gossip.ModelOffer{Name: "m"}, terms.Sampling{Tools: []terms.Tool{{Name: "f"}}}, terms.CodeParamUnsupported},
		{gossip.ModelOffer{Name: "m"}, terms.Sampling{Format: &terms.ResponseFormat{Type: terms.FormatJSONObject}}, terms.CodeParamUnsupported},
		{embedded, terms.Sampling{Format: &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "x", Schema: json.RawMessage(`{ "type": "object" }`)}}, terms.CodeBadRequest},
		{embedded, terms.Sampling{Format: &terms.ResponseFormat{Type: "yaml"}}, terms.CodeBadRequest},
		{embedded, terms.Sampling{Tools: []terms.Tool{{Name: ""}}}, terms.CodeBadRequest},
		{embedded, terms.Sampling{Tools: []terms.Tool{{Name: "f"}}, ToolChoice: terms.ToolChoiceFunction, ToolName: "g"}, terms.CodeBadRequest},
	} {
		got, why := "", ""
		if e := refuseUnannounced(c.offer, &infer.Request{Sampling: c.s}); e != nil {
			got, why = e.Code, e.Message
		}
		if got != c.code {
			t.Errorf("%+v: refused %q (%s), want %q", c.s, got, why, c.code)
		}
	}
}

package gossip

import (
	"errors"
	"testing"
	"time"
)

func TestOfferFeaturesChecked(t *testing.T) {
	p := newTestProvider(t, time.Unix(1_700_000_000, 0))
	cases := []struct {
		name   string
		params []string
		quant  string
		ok     bool
	}{
		{"none", nil, "", true},
		{"sorted", []string{ParamLogprobs, ParamResponseFormat, ParamTools}, "q8_0", true},
		{"unknown but well formed", []string{"future_param"}, "iq2_xxs", true},
		{"unsorted", []string{ParamTools, ParamLogprobs}, "", false},
		{"repeated", []string{ParamTools, ParamTools}, "", false},
		{"upper case", []string{"Tools"}, "", false},
		{"non-ascii", []string{"tööls"}, "", false},
		{"empty entry", []string{""}, "", false},
		{"quant with space", nil, "q8 0", false},
		{"quant too long", nil, "q8_0_q8_0_q8_0_q8", false},
	}
	for _, c := range cases {
		an := p.announcement(time.Unix(1_700_000_000, 0))
		an.Models[0].Params, an.Models[0].Quant = c.params, c.quant
		err := an.Check()
		if (err == nil) != c.ok {
			t.Errorf("%s: Check() = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, errInvalid) {
			t.Errorf("%s: error %v is not errInvalid", c.name, err)
		}
	}
	many := make([]string, maxParams+1)
	for i := range many {
		many[i] = string(rune('a'+i/26)) + string(rune('a'+i%26))
	}
	an := p.announcement(time.Unix(1_700_000_000, 0))
	an.Models[0].Params = many
	if an.Check() == nil {
		t.Fatalf("%d params accepted", len(many))
	}
	an.Models[0].Params = []string{ParamTools}
	if !an.Models[0].Supports(ParamTools) || an.Models[0].Supports(ParamTopK) {
		t.Fatal("Supports does not read Params")
	}
}

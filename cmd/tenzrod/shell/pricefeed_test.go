package shell

import (
	"bytes"
	"strings"
	"testing"
)

func TestRenderPriceFeed(t *testing.T) {
	raw := []byte(`{"window_ms":600000,"min_observers":2,"entries":[{"provider":"12D3KooWKGgXzjz3zR1TuT8M","model":"d9a39bbf2c5142c9",
		"window_start_ms":1796007000000,"attested":true,"observers":["aa","bb"],"count":7,"success_rate":1,
		"price_per_unit_p50":1.5,"price_per_unit_p95":2,"latency_p50_ms":5,"latency_p95_ms":9,
		"provider_claims":{"hardware_class":{"value":"cpu-generic","claimed":true},"region":{"value":"DE","claimed":true}}}]}`)
	var out bytes.Buffer
	if err := decoded(renderPriceFeed)(&out, raw, nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"ATTESTED", "yes", "1.50", "2.00", "5ms", "9ms", "cpu-generic", "DE", "HW (claim)", "own claims"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q in\n%s", want, s)
		}
	}
}

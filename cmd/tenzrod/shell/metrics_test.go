package shell

import (
	"bytes"
	"strings"
	"testing"
)

func TestRenderMetrics(t *testing.T) {
	raw := []byte(`{"requests_routed":3,"hedges_dispatched":1,"hedges_won":1,"deadline_misses":0,"failovers":1,"continuations":0,"bad_receipts":0,
		"providers":{"12D3KooWKGgXzjz3zR1TuT8Maaaa":{"attempts":3,"failures":1,"won":2,"hedges_won":1,"paid":56,"latency_samples":4,"p95_ms":12.5,
			"breaker":{"state":"open","consecutive_failures":3,"open_until":"2026-12-01T10:00:05Z","opens":2,"last_failure":"infer: stream reset"}},
		"12D3KooWZZZZzjz3zR1TuT8Mbbbb":{"attempts":1,"cancelled":1}}}`)
	var out bytes.Buffer
	if err := decoded(renderMetrics)(&out, raw, nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"requests routed 3", "hedges dispatched 1 (won 1)", "failovers 1", "P95 (SAMPLES)", "12.5 ms (4)", "56",
		"BREAKER", "open until ", "(opened 2×)", "breaker open after: infer: stream reset"} {
		if !strings.Contains(s, want) {
			t.Fatalf("missing %q in\n%s", want, s)
		}
	}
	if lines := strings.Split(strings.TrimSpace(s), "\n"); len(lines) != 5 || !strings.HasSuffix(strings.Join(strings.Fields(lines[3]), " "), "- -") {
		t.Fatalf("want a header, a table header, two rows (the unmeasured provider's p95 and breaker shown as -) and the open breaker's reason:\n%s", s)
	}
}

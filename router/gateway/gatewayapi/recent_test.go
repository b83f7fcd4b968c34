package gatewayapi

import "testing"

// FuzzRecentParams: whatever params arrive, the decoders never panic and
// accept only a limit in range and a provider that is a peer ID.
func FuzzRecentParams(f *testing.F) {
	for _, s := range []string{``, `null`, `{"limit":5,"after":3}`, `{"limit":-1}`, `{"limit":1e9}`, `{"after":-1}`, `[]`,
		`{"provider":"12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"}`, `{"provider":""}`, `{"x":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if p, err := parseRecentParams([]byte(raw)); err == nil && (p.Limit < 0 || p.Limit > 200) {
			t.Fatalf("accepted limit %d", p.Limit)
		}
		if pid, err := parseLatencyParams([]byte(raw)); err == nil && pid != "" {
			if err := pid.Validate(); err != nil {
				t.Fatalf("accepted provider %q: %v", pid, err)
			}
		}
	})
}

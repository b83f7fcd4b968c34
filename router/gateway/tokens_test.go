package gateway

import "testing"

func TestIDsSpell(t *testing.T) {
	for _, c := range []struct {
		full, own string
		stops     []string
		want      bool
	}{
		{"hello world", "hello world", nil, true},
		{"hello world", "hello ", []string{"wo"}, true},     // cut by a stop sequence
		{"hello world!", "hello ", []string{"world"}, true}, // the stop's token carried more
		{"hello world", "hello ", []string{"xx"}, false},    // extra text no stop explains
		{"hello world", "hello ", []string{""}, false},      // an empty stop explains nothing
		{"hello world", "help", []string{"lo"}, false},      // not what was received
		{"hi", "hi there", nil, false},                      // fewer IDs than text
	} {
		if got := idsSpell(c.full, c.own, c.stops); got != c.want {
			t.Errorf("idsSpell(%q, %q, %q) = %v, want %v", c.full, c.own, c.stops, got, c.want)
		}
	}
}

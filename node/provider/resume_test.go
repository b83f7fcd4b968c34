package provider

import "testing"

// TestResumable: tokens that end inside a character, or inside a stop
// sequence, still resume the stream exactly; tokens that spell other text
// do not.
func TestResumable(t *testing.T) {
	char := "ڧ" // two bytes: 0xDA 0xA7
	for _, c := range []struct {
		name, spelled, sent string
		stops               []string
		want                bool
	}{
		{"exact", "hello", "hello", nil, true},
		{"a character held back", "hello " + char[:1], "hello ", nil, true},
		{"three bytes of four", "a" + "😀"[:3], "a", nil, true},
		{"a whole character is not held back", "hello " + char, "hello ", nil, false},
		{"the start of a stop", "hello EN", "hello ", []string{"END"}, true},
		{"a stop's start ending in a partial character", "x ¿" + char[:1], "x ", []string{"¿" + char}, true},
		{"other text", "help", "hello", nil, false},
		{"more than was held", "hello world", "hello", []string{"END"}, false},
		{"sent text that is not valid", "a\xff", "a\xff", nil, false},
		// A random model's bytes that never become UTF-8 were sent
		// sanitised, one U+FFFD a byte.
		{"sanitised bytes, then a character held back", "a\xff\xfeb" + char[:1], "a\uFFFD\uFFFDb", nil, true},
		{"sanitised bytes, exact", "a\xffb", "a\uFFFDb", nil, true},
		{"sanitised bytes, other text", "a\xffc", "a\uFFFDb", nil, false},
	} {
		if got := resumable(c.spelled, c.sent, c.stops); got != c.want {
			t.Errorf("%s: resumable(%q, %q) = %v, want %v", c.name, c.spelled, c.sent, got, c.want)
		}
	}
}

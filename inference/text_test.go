package inference

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"caf\xc3\xa9":     "café",
		"a\xd8\xea\x8cb":  "a\uFFFD\uFFFD\uFFFDb",
		"\xff":            "\uFFFD",
		"\xe2\x82":        "\uFFFD\uFFFD",
		"ok\xe2\x82\xacx": "ok€x",
	} {
		if got := ValidText(in); got != want {
			t.Errorf("ValidText(%q) = %q, want %q", in, got, want)
		}
	}
}

// Sanitising pieces one by one and joining them equals sanitising the
// whole, for any split at a character boundary.
func FuzzValidTextConcat(f *testing.F) {
	f.Add("a\xd8\xea\x8cb", 2)
	f.Add("caf\xc3\xa9\xff", 4)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		if cut < 0 || cut > len(s) || (cut < len(s) && !utf8.RuneStart(s[cut])) {
			return
		}
		// A cut inside a valid multi-byte character is not a boundary.
		if cut > 0 && cut < len(s) {
			for i := max(0, cut-3); i < cut; i++ {
				if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError && i+n > cut {
					return
				}
			}
		}
		whole, joined := ValidText(s), ValidText(s[:cut])+ValidText(s[cut:])
		if whole != joined || !utf8.ValidString(whole) {
			t.Fatalf("ValidText(%q) = %q; pieces at %d join to %q", s, whole, cut, joined)
		}
		if strings.Count(whole, "\uFFFD") < strings.Count(strings.ToValidUTF8(s, "\uFFFD"), "\uFFFD") {
			t.Fatalf("fewer replacements than runs of bad bytes in %q", s)
		}
	})
}

package p2p

import (
	"strings"
	"unicode/utf8"
)

// Clip returns s as valid UTF-8 (each invalid run replaced by U+FFFD) of
// at most n bytes, cut on a rune boundary: a reason or message a peer
// sent or is sent stays bounded, and prints.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

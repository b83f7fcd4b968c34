package inference

import (
	"strings"
	"unicode/utf8"
)

// ValidText returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json shows it. Unlike
// strings.ToValidUTF8, which folds a run of bad bytes into one U+FFFD, it
// commutes with concatenation at character boundaries: the pieces of an
// answer, sanitised one by one as they stream, join to the sanitised whole
// — so a gateway can check a provider's token IDs against the text it
// streamed.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

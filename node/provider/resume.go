package provider

import (
	"strings"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/inference"
)

// resumable reports whether continuation tokens that decode to spelled
// continue the text sent. The provider that broke sent its text piece by
// piece, sanitised (inference.ValidText), and held back at the end what
// was not yet final: the start of a character not yet complete, or the
// start of a stop sequence. So the tokens continue the text when
// spelled, less some such held-back end, sanitises to exactly sent.
// Comparing all of spelled would refuse exactly the tokens that end
// inside a character, and resuming those from re-tokenized text gives
// another answer.
func resumable(spelled, sent string, stops []string) bool {
	longest := utf8.UTFMax
	for _, s := range stops {
		longest = max(longest, len(s)+utf8.UTFMax)
	}
	for k := 0; k <= min(longest, len(spelled)); k++ {
		head, rest := spelled[:len(spelled)-k], spelled[len(spelled)-k:]
		if holdable(rest, stops) && inference.ValidText(head) == sent {
			return true
		}
	}
	return false
}

// holdable reports whether a provider can have held rest back at the end
// of its text: nothing, a character begun and not finished, or the
// beginning of a stop sequence (itself possibly ending in such a
// character).
func holdable(rest string, stops []string) bool {
	if rest == "" || heldChar(rest) {
		return true
	}
	for _, s := range stops {
		if len(rest) < len(s) && strings.HasPrefix(s, rest) {
			return true
		}
		if i := len(rest) - tailLen(rest); i > 0 && i < len(s) && strings.HasPrefix(s, rest[:i]) {
			return true
		}
	}
	return false
}

// heldChar reports whether rest is one character begun and not finished.
func heldChar(rest string) bool {
	return len(rest) < utf8.UTFMax && utf8.RuneStart(rest[0]) && rest[0] >= utf8.RuneSelf && !utf8.FullRuneInString(rest)
}

// tailLen is the length of an unfinished character at the end of s.
func tailLen(s string) int {
	for n := 1; n < utf8.UTFMax && n <= len(s); n++ {
		if utf8.RuneStart(s[len(s)-n]) {
			if heldChar(s[len(s)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

package provider

import (
	"strings"
	"unicode/utf8"
)

// resumable reports whether continuation tokens that decode to spelled
// continue the text sent: spelled is the text itself, or the text and
// what a provider holds back at a break (the start of a character not yet
// complete, or the start of a stop sequence). Comparing the decoded text
// whole would refuse exactly the tokens that end inside a character, and
// resuming those from re-tokenized text gives another answer.
func resumable(spelled, sent string, stops []string) bool {
	rest, ok := strings.CutPrefix(spelled, sent)
	if !ok || !utf8.ValidString(sent) {
		return false
	}
	if rest == "" {
		return true
	}
	if heldChar(rest) {
		return true
	}
	for _, s := range stops {
		// Held back as a stop's beginning, possibly ending in a character
		// not yet complete.
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

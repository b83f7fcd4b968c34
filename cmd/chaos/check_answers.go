package main

import (
	"context"
	"unicode/utf8"
)

// checkAnswers: every complete answer is what the referee computes for
// the same request and seed; never a truncated or altered success.
func (c *checker) checkAnswers(ctx context.Context, calls []*callRecord) int {
	n := 0
	for _, k := range calls {
		if !k.ok() {
			continue
		}
		text, finish, err := c.ref.answer(ctx, k.Req)
		if err != nil {
			c.violate("call %d: the referee cannot answer it: %v", k.ID, err)
			continue
		}
		n++
		if k.record() != nil && (k.Answer.Tenzro.Receipt == nil || !k.Answer.Tenzro.Receipt.Verified) {
			c.violate("call %d via %s: paid (record %s) without a receipt the gateway verified", k.ID, k.Router, clip(k.record().RequestDigest))
		}
		if k.Answer.Text != text || k.Answer.Finish != finish {
			at, got, want := divergence(k.Answer.Text, text)
			what := "complete answer"
			if splitCharacter(k, got, want) {
				what = splitContinuation + ": complete answer"
			}
			c.violate("call %d (%s via %s, stream %v, continued %v, provider %s): %s differs from the referee's at rune %d (%q vs %q; finish %s vs %s)",
				k.ID, k.Kind, k.Router, k.Req.Stream, k.Answer.Tenzro != nil && k.Answer.Tenzro.Continued, providerOf(k), what,
				at, got, want, k.Answer.Finish, finish)
		}
	}
	return n
}

// splitContinuation names a failure the soak found (seed 7, 5 minutes):
// a stream broken while a multi-byte character was half emitted (the
// provider holds its first bytes back) is continued with U+FFFD where an
// unbroken run has the character, and every token after differs: the
// successor does not resume from the same state. It stays a violation;
// the label lets TestChaosShort tell this known bug from any other.
const splitContinuation = "split-character continuation"

// splitCharacter reports whether a differing answer has that signature: it
// was continued, and where it departs from the referee it has the
// replacement character and the referee a multi-byte one.
func splitCharacter(k *callRecord, got, want string) bool {
	g, w := []rune(got), []rune(want)
	return k.Answer.Tenzro != nil && k.Answer.Tenzro.Continued && len(g) > 0 && len(w) > 0 &&
		g[0] == utf8.RuneError && w[0] >= utf8.RuneSelf
}

// divergence is the rune index where got and want first differ and a few
// runes of each from there.
func divergence(got, want string) (int, string, string) {
	g, w := []rune(got), []rune(want)
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	return i, string(g[i:min(len(g), i+12)]), string(w[i:min(len(w), i+12)])
}

func providerOf(k *callRecord) string {
	if t := k.Answer.Tenzro; t != nil {
		return clip(t.Provider.PeerID)
	}
	return "?"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

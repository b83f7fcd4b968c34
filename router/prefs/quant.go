package prefs

import (
	"slices"
	"strings"
)

// QuantClass is OpenRouter's name for a GGUF file type: "f32" → "fp32",
// "f16" → "fp16", "bf16", "q8_0" → "int8", "q4_k_m" → "int4"; a type it
// cannot place (or none announced) is "unknown".
func QuantClass(ggufType string) string {
	t := strings.ToLower(ggufType)
	switch {
	case t == "":
		return "unknown"
	case t == "f32" || t == "fp32":
		return "fp32"
	case t == "f16" || t == "fp16":
		return "fp16"
	case t == "bf16":
		return "bf16"
	case t[0] == 'q' || strings.HasPrefix(t, "iq"):
		if i := strings.IndexAny(t, "12345678"); i >= 0 {
			return "int" + string(t[i])
		}
	}
	return "unknown"
}

// AllowsQuant reports whether an offer of GGUF file type ggufType meets
// the quantizations preference: listed by its file type itself or by its
// class (QuantClass). No preference allows every offer.
func (p *Preferences) AllowsQuant(ggufType string) bool {
	if p == nil || len(p.Quantizations) == 0 {
		return true
	}
	t := strings.ToLower(ggufType)
	return (t != "" && slices.Contains(p.Quantizations, t)) || slices.Contains(p.Quantizations, QuantClass(t))
}

package llm

import (
	"fmt"
	"math"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// archTraits are what an architecture fixes in code rather than in its
// metadata, as llama.cpp's loader and graph builders fix them.
type archTraits struct {
	// neox: rope rotates the pairs (i, i+d/2) of a head (llama.cpp's
	// LLAMA_ROPE_TYPE_NEOX). llama's converter permutes Q and K so that
	// adjacent pairs serve instead; the others are stored unpermuted.
	neox    bool
	qkvBias bool // attn_{q,k,v}.bias are required
	qkNorm  bool // attn_{q,k}_norm.weight: an RMSNorm over each head of Q and K before rope
	// moe: every layer is a mixture of experts of expert_feed_forward_length
	// (llama.cpp's qwen3moe: softmax router, top-k weights renormalised, as
	// the engine's llama experts).
	moe bool
	// gemma: embeddings scaled by sqrt(n_embd), post-attention and
	// post-feed-forward norms before each residual add, GeGLU.
	gemma bool
	// swaPattern: layer l attends to a sliding window unless
	// l%swaPattern == swaPattern-1 (llama.cpp's set_swa_pattern); 0: no
	// sliding layers.
	swaPattern int
	swaDefault uint64 // window when the file gives none (0: the key is required)
	// swaOptional: without a window every layer is global and the final
	// logits are soft-capped (newer llama.cpp's gemma3); with one,
	// attention.sliding_window_pattern may replace swaPattern.
	swaOptional bool
	softcap     bool    // attention and final logit soft-capping
	swaBase     float64 // rope base of the sliding layers (0: the model's base)
	layers27B   int     // block count llama.cpp calls 27B, whose query scale is 1/sqrt(n_embd/n_head)
	// fusedGateUp: ffn_up holds the gate's rows then the up projection's
	// (Phi-3), and there is no ffn_gate.
	fusedGateUp bool
	// noRopeFactors names per-frequency rope factor tensors whose scheme
	// the engine lacks (Phi-3's LongRoPE), refused rather than ignored.
	noRopeFactors []string
}

var archs = map[string]archTraits{
	"llama":    {},
	"qwen2":    {neox: true, qkvBias: true},
	"qwen3":    {neox: true, qkNorm: true},
	"qwen3moe": {neox: true, qkNorm: true, moe: true},
	"gemma2":   {neox: true, gemma: true, swaPattern: 2, swaDefault: 4096, softcap: true, layers27B: 46},
	"gemma3":   {neox: true, gemma: true, qkNorm: true, swaPattern: 6, swaOptional: true, swaBase: 10000, layers27B: 62},
	// llama.cpp ignores phi3.attention.sliding_window (it disables Phi's
	// SWA), so the engine does too.
	"phi3": {neox: true, fusedGateUp: true, noRopeFactors: []string{"rope_factors_long.weight", "rope_factors_short.weight"}},
}

// Architectures lists the general.architecture values the engine loads.
func Architectures() []string {
	return []string{"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3"}
}

// archConfig reads the metadata an architecture's traits call for.
func archConfig(f *gguf.File, c *Config, t archTraits) error {
	c.RopeNeox, c.QKVBias, c.QKNorm, c.Gemma, c.FusedGateUp = t.neox, t.qkvBias, t.qkNorm, t.gemma, t.fusedGateUp
	for _, name := range t.noRopeFactors {
		if _, ok := f.Tensor(name); ok {
			return fmt.Errorf("%s: LongRoPE factors (%s) are not supported", c.Arch, name)
		}
	}
	c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
	if t.layers27B != 0 && c.Layers == t.layers27B {
		c.AttnScale = 1 / math.Sqrt(float64(c.Dim/c.Heads))
	}
	c.RopeBaseSWA, c.RopeScaleSWA = c.RopeBase, c.RopeScale
	if t.swaBase != 0 {
		c.RopeBaseSWA, c.RopeScaleSWA = t.swaBase, 1
		if err := optFloat(f, c.Arch+".rope.freq_base_swa", 1, 1e12, &c.RopeBaseSWA); err != nil {
			return err
		}
	}
	if t.swaPattern != 0 {
		w, ok, err := f.Uint(c.Arch + ".attention.sliding_window")
		switch {
		case err != nil:
			return err
		case t.swaOptional && (!ok || w == 0):
			// As llama.cpp builds such a gemma3: every layer global, the
			// final logits soft-capped (30 unless the file says).
			c.FinalSoftcap = 30
			return optFloat(f, c.Arch+".final_logit_softcapping", 0, 1e6, &c.FinalSoftcap)
		case !ok && t.swaDefault == 0:
			return fmt.Errorf("%s.attention.sliding_window missing", c.Arch)
		case !ok:
			w = t.swaDefault
		case w < 1 || w > maxContext:
			return fmt.Errorf("%s.attention.sliding_window %d outside 1..%d", c.Arch, w, maxContext)
		}
		c.SlidingWindow, c.SWAPattern = int(w), t.swaPattern
		if t.swaOptional {
			p, ok, err := f.Uint(c.Arch + ".attention.sliding_window_pattern")
			switch {
			case err != nil:
				return fmt.Errorf("%s.attention.sliding_window_pattern (a per-layer array is not supported): %w", c.Arch, err)
			case ok && (p < 1 || p > maxLayers):
				return fmt.Errorf("%s.attention.sliding_window_pattern %d outside 1..%d", c.Arch, p, maxLayers)
			case ok:
				c.SWAPattern = int(p)
			}
		}
	}
	if t.softcap {
		// llama.cpp's defaults when the keys are absent.
		c.AttnSoftcap, c.FinalSoftcap = 50, 30
		if err := optFloat(f, c.Arch+".attn_logit_softcapping", 0, 1e6, &c.AttnSoftcap); err != nil {
			return err
		}
		if err := optFloat(f, c.Arch+".final_logit_softcapping", 0, 1e6, &c.FinalSoftcap); err != nil {
			return err
		}
	}
	return nil
}

// optFloat sets *v from key when present, checking it lies in (lo, hi].
func optFloat(f *gguf.File, key string, lo, hi float64, v *float64) error {
	x, ok, err := f.Float(key)
	if err != nil || !ok {
		return err
	}
	if !(x > lo && x <= hi) {
		return fmt.Errorf("%s = %v outside (%v, %v]", key, x, lo, hi)
	}
	*v = x
	return nil
}

// Sliding reports whether layer l attends only to the last SlidingWindow
// positions.
func (c Config) Sliding(l int) bool {
	return c.SWAPattern != 0 && l%c.SWAPattern < c.SWAPattern-1
}

// QDim is the width of one position's queries (Heads x HeadDim), which
// differs from Dim when the file sets attention.key_length.
func (c Config) QDim() int { return c.Heads * c.HeadDim }

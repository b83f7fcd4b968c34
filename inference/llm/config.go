package llm

import (
	"fmt"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Config is the shape of a llama-family model, read from GGUF metadata.
type Config struct {
	Name        string
	Arch        string
	Dim         int // embedding length
	Layers      int
	Heads       int
	KVHeads     int
	HeadDim     int
	FFN         int // feed-forward (or per-expert) hidden size
	Vocab       int
	Context     int // context length the model was built for
	RopeBase    float64
	RopeDim     int
	Eps         float32
	Experts     int // 0 for a dense model
	ExpertsUsed int
}

// Limits on what a file may declare; they keep a hostile file from asking
// for absurd allocations before any tensor is checked.
const (
	maxDim     = 1 << 15
	maxLayers  = 512
	maxFFN     = 1 << 17
	maxExperts = 256
	maxContext = 1 << 20
)

func configFrom(f *gguf.File) (Config, error) {
	var c Config
	var err error
	arch, ok, err := f.String("general.architecture")
	if err != nil || !ok {
		return c, fmt.Errorf("general.architecture missing or invalid: %w", err)
	}
	if arch != "llama" {
		return c, fmt.Errorf("unsupported architecture %q (want llama)", arch)
	}
	c.Arch = arch
	c.Name, _, _ = f.String("general.name")
	u := func(key string, def uint64, lo, hi int) (int, error) {
		v, ok, err := f.Uint(arch + "." + key)
		if err != nil {
			return 0, err
		}
		if !ok {
			if def == 0 {
				return 0, fmt.Errorf("%s.%s missing", arch, key)
			}
			v = def
		}
		if v < uint64(lo) || v > uint64(hi) {
			return 0, fmt.Errorf("%s.%s = %d outside %d..%d", arch, key, v, lo, hi)
		}
		return int(v), nil
	}
	if c.Dim, err = u("embedding_length", 0, 1, maxDim); err != nil {
		return c, err
	}
	if c.Layers, err = u("block_count", 0, 1, maxLayers); err != nil {
		return c, err
	}
	if c.Heads, err = u("attention.head_count", 0, 1, c.Dim); err != nil {
		return c, err
	}
	if c.KVHeads, err = u("attention.head_count_kv", uint64(c.Heads), 1, c.Heads); err != nil {
		return c, err
	}
	if c.FFN, err = u("feed_forward_length", 0, 1, maxFFN); err != nil {
		return c, err
	}
	if c.Context, err = u("context_length", 2048, 1, maxContext); err != nil {
		return c, err
	}
	if c.Experts, err = u("expert_count", 1, 0, maxExperts); err != nil {
		return c, err
	}
	if c.ExpertsUsed, err = u("expert_used_count", 1, 0, max(c.Experts, 1)); err != nil {
		return c, err
	}
	if c.Experts <= 1 {
		c.Experts, c.ExpertsUsed = 0, 0
	} else if c.ExpertsUsed < 1 {
		return c, fmt.Errorf("%d experts but expert_used_count %d", c.Experts, c.ExpertsUsed)
	}
	if c.Dim%c.Heads != 0 || c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("embedding %d, %d heads and %d kv heads do not divide evenly", c.Dim, c.Heads, c.KVHeads)
	}
	c.HeadDim = c.Dim / c.Heads
	if kl, ok, err := f.Uint(arch + ".attention.key_length"); err != nil {
		return c, err
	} else if ok && kl != uint64(c.HeadDim) {
		return c, fmt.Errorf("attention.key_length %d differs from embedding/heads %d", kl, c.HeadDim)
	}
	if c.RopeDim, err = u("rope.dimension_count", uint64(c.HeadDim), 2, c.HeadDim); err != nil {
		return c, err
	}
	if c.RopeDim%2 != 0 {
		return c, fmt.Errorf("rope.dimension_count %d is odd", c.RopeDim)
	}
	c.RopeBase = 10000
	if b, ok, err := f.Float(arch + ".rope.freq_base"); err != nil {
		return c, err
	} else if ok {
		if b <= 1 || b > 1e12 {
			return c, fmt.Errorf("rope.freq_base %v out of range", b)
		}
		c.RopeBase = b
	}
	if st, ok, err := f.String(arch + ".rope.scaling.type"); err != nil {
		return c, err
	} else if ok && st != "none" {
		return c, fmt.Errorf("rope scaling %q is not supported", st)
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		return c, fmt.Errorf("rope frequency factors (rope_freqs.weight) are not supported")
	}
	c.Eps = 1e-5
	if e, ok, err := f.Float(arch + ".attention.layer_norm_rms_epsilon"); err != nil {
		return c, err
	} else if ok {
		if e <= 0 || e > 1 {
			return c, fmt.Errorf("layer_norm_rms_epsilon %v out of range", e)
		}
		c.Eps = float32(e)
	}
	return c, nil
}

// KVDim is the width of one position's keys (or values) in the cache.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim }

package modelgen

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// GenOptions shape a generated model.
type GenOptions struct {
	Name      string
	Seed      uint64
	Layers    int
	Dim       int
	Heads     int
	KVHeads   int
	FFN       int // hidden size of the feed-forward block (of each expert)
	Vocab     int // vocabulary size, padded with reserved tokens when the corpus yields fewer merges
	Context   int
	RopeBase  float64
	Quant     gguf.Type // F32, F16 or Q8_0 for the projection, embedding and output matrices
	Tokenizer string    // "gpt2" (byte-level BPE, default) or "llama" (SentencePiece BPE)
	// MoE replaces each feed-forward block by Experts experts of which the
	// router picks ExpertsUsed per token.
	MoE         bool
	Experts     int
	ExpertsUsed int
}

// DevnetOptions are the defaults of `tenzrod model gen`: about 2M weights
// (8 MB in F32, 2 MB in Q8_0), generated in well under a second.
func DevnetOptions() GenOptions {
	return GenOptions{
		Name: "tenzro-devnet", Seed: 1, Layers: 4, Dim: 192, Heads: 6, KVHeads: 2,
		FFN: 512, Vocab: 768, Context: 2048, RopeBase: 10000, Quant: gguf.TypeF32,
		Tokenizer: "gpt2", Experts: 4, ExpertsUsed: 2,
	}
}

func (o *GenOptions) check() error {
	switch {
	case o.Layers < 1 || o.Layers > 256:
		return fmt.Errorf("layers %d outside 1..256", o.Layers)
	case o.Dim < 32 || o.Dim > 16384 || o.Dim%32 != 0:
		return fmt.Errorf("dim %d must be a multiple of 32 in 32..16384", o.Dim)
	case o.Heads < 1 || o.Dim%o.Heads != 0 || (o.Dim/o.Heads)%2 != 0:
		return fmt.Errorf("%d heads must divide dim %d into even head sizes", o.Heads, o.Dim)
	case o.KVHeads < 1 || o.Heads%o.KVHeads != 0:
		return fmt.Errorf("%d kv heads must divide %d heads", o.KVHeads, o.Heads)
	case o.FFN < 32 || o.FFN > 65536 || o.FFN%32 != 0:
		return fmt.Errorf("ffn %d must be a multiple of 32 in 32..65536", o.FFN)
	case o.Vocab < 300 || o.Vocab > 1<<20:
		return fmt.Errorf("vocab %d outside 300..1048576", o.Vocab)
	case o.Context < 16 || o.Context > 1<<20:
		return fmt.Errorf("context %d outside 16..1048576", o.Context)
	case !o.Quant.Supported():
		return fmt.Errorf("quantisation %v not supported", o.Quant)
	case o.MoE && (o.Experts < 2 || o.Experts > 64 || o.ExpertsUsed < 1 || o.ExpertsUsed > o.Experts):
		return fmt.Errorf("moe needs 2..64 experts and 1..experts used, got %d and %d", o.Experts, o.ExpertsUsed)
	}
	if o.RopeBase == 0 {
		o.RopeBase = 10000
	}
	return nil
}

// GenerateModel writes dir/model.gguf: a random-weight model shaped by opts.
func GenerateModel(dir string, opts GenOptions) error {
	if err := opts.check(); err != nil {
		return fmt.Errorf("modelgen: %w", err)
	}
	v, err := buildVocab(opts.Tokenizer, opts.Vocab)
	if err != nil {
		return err
	}
	w := gguf.NewWriter()
	writeMeta(w, &opts, len(v.tokens))
	v.write(w, opts.Tokenizer)
	if err := addTensors(w, &opts, len(v.tokens)); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("modelgen: %w", err)
	}
	if err := w.WriteFile(filepath.Join(dir, "model.gguf")); err != nil {
		return fmt.Errorf("modelgen: %w", err)
	}
	return nil
}

func writeMeta(w *gguf.Writer, o *GenOptions, vocab int) {
	name := o.Name
	if name == "" {
		name = "tenzro-generated"
	}
	ft := map[gguf.Type]uint32{gguf.TypeF32: 0, gguf.TypeF16: 1, gguf.TypeQ8_0: 7}[o.Quant]
	w.SetString("general.architecture", "llama")
	w.SetString("general.name", name)
	w.SetUint32("general.file_type", ft)
	w.SetUint64("general.seed", o.Seed)
	w.SetUint32("llama.context_length", uint32(o.Context))
	w.SetUint32("llama.embedding_length", uint32(o.Dim))
	w.SetUint32("llama.block_count", uint32(o.Layers))
	w.SetUint32("llama.feed_forward_length", uint32(o.FFN))
	w.SetUint32("llama.attention.head_count", uint32(o.Heads))
	w.SetUint32("llama.attention.head_count_kv", uint32(o.KVHeads))
	w.SetUint32("llama.rope.dimension_count", uint32(o.Dim/o.Heads))
	w.SetFloat32("llama.rope.freq_base", float32(o.RopeBase))
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.SetUint32("llama.vocab_size", uint32(vocab))
	if o.MoE {
		w.SetUint32("llama.expert_count", uint32(o.Experts))
		w.SetUint32("llama.expert_used_count", uint32(o.ExpertsUsed))
	}
}

// filler returns a row function drawing uniform values with standard
// deviation std (plus mean) from a PRNG keyed by the seed and tensor name.
func filler(seed uint64, name string, mean, std float64) gguf.RowFunc {
	h := fnv.New64a()
	h.Write([]byte(name))
	key := h.Sum64()
	a := std * math.Sqrt(3)
	var rng *rand.Rand
	return func(row int, dst []float32) {
		if row == 0 || rng == nil {
			rng = rand.New(rand.NewPCG(seed, key))
		}
		for i := range dst {
			dst[i] = float32(mean + a*(2*rng.Float64()-1))
		}
	}
}

func addTensors(w *gguf.Writer, o *GenOptions, vocab int) error {
	d, kv, ff := uint64(o.Dim), uint64(o.Dim/o.Heads*o.KVHeads), uint64(o.FFN)
	q := o.Quant
	inv := func(n uint64) float64 { return 1 / math.Sqrt(float64(n)) }
	var errs []error
	add := func(name string, t gguf.Type, shape []uint64, mean, std float64) {
		errs = append(errs, w.AddTensor(name, t, shape, filler(o.Seed, name, mean, std)))
	}
	add("token_embd.weight", q, []uint64{d, uint64(vocab)}, 0, 1)
	for l := 0; l < o.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.TypeF32, []uint64{d}, 1, 0.05)
		add(p+"attn_q.weight", q, []uint64{d, d}, 0, 2*inv(d))
		add(p+"attn_k.weight", q, []uint64{d, kv}, 0, 2*inv(d))
		add(p+"attn_v.weight", q, []uint64{d, kv}, 0, inv(d))
		add(p+"attn_output.weight", q, []uint64{d, d}, 0, inv(d))
		add(p+"ffn_norm.weight", gguf.TypeF32, []uint64{d}, 1, 0.05)
		if o.MoE {
			e := uint64(o.Experts)
			add(p+"ffn_gate_inp.weight", gguf.TypeF32, []uint64{d, e}, 0, 2*inv(d))
			add(p+"ffn_gate_exps.weight", q, []uint64{d, ff, e}, 0, inv(d))
			add(p+"ffn_up_exps.weight", q, []uint64{d, ff, e}, 0, inv(d))
			add(p+"ffn_down_exps.weight", q, []uint64{ff, d, e}, 0, inv(ff))
		} else {
			add(p+"ffn_gate.weight", q, []uint64{d, ff}, 0, inv(d))
			add(p+"ffn_up.weight", q, []uint64{d, ff}, 0, inv(d))
			add(p+"ffn_down.weight", q, []uint64{ff, d}, 0, inv(ff))
		}
	}
	add("output_norm.weight", gguf.TypeF32, []uint64{d}, 1, 0.05)
	add("output.weight", q, []uint64{d, uint64(vocab)}, 0, 3*inv(d))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("modelgen: %w", err)
	}
	return nil
}

package llm

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// FFN is one SwiGLU feed-forward block: down(silu(gate·x) ⊙ up·x). A dense
// layer has one; a mixture-of-experts layer has one per expert.
type FFN struct {
	Gate, Up, Down *Matrix
}

// Layer holds one transformer block's weights.
type Layer struct {
	AttnNorm, FFNNorm []float32
	Q, K, V, O        *Matrix
	QBias, KBias      []float32 // qwen2 (optional elsewhere)
	VBias, OBias      []float32
	QNorm, KNorm      []float32 // qwen3, gemma3: HeadDim each
	PostAttnNorm      []float32 // gemma
	PostFFNNorm       []float32 // gemma
	FFN               *FFN      // dense layers
	Router            *Matrix   // MoE: Experts rows of Dim
	Experts           []*FFN    // MoE
}

// Model is a loaded llama-family model: configuration, tokenizer and weights.
type Model struct {
	Cfg     Config
	Tok     *Tokenizer
	Quant   string
	Params  int64
	Embed   *Matrix
	OutNorm []float32
	Output  *Matrix
	Layers  []Layer
	// RopeFactors divide the rope frequencies (rope_freqs.weight; nil
	// when the file has none).
	RopeFactors []float32
	// Rope inverse frequencies (scaling and rope_freqs.weight applied) of
	// the global and the sliding-window layers.
	invFreq, invFreqSWA []float64
}

// LoadModel reads a llama-family model from an opened GGUF file, one tensor
// at a time.
func LoadModel(f *gguf.File) (*Model, error) {
	cfg, err := configFrom(f)
	if err != nil {
		return nil, fmt.Errorf("llm: %s: %w", f.Path, err)
	}
	tok, err := NewTokenizer(f)
	if err != nil {
		return nil, err
	}
	cfg.Vocab = tok.VocabSize()
	m := &Model{Cfg: cfg, Tok: tok}
	ld := &loader{f: f, m: m, types: map[gguf.Type]bool{}}
	if m.Embed = ld.matrix("token_embd.weight", cfg.Vocab, cfg.Dim); ld.err != nil {
		return nil, ld.err
	}
	m.OutNorm = ld.vector("output_norm.weight", cfg.Dim)
	if _, ok := f.Tensor("output.weight"); ok {
		m.Output = ld.matrix("output.weight", cfg.Vocab, cfg.Dim)
	} else {
		m.Output = m.Embed // tied embeddings
	}
	kv := cfg.KVDim()
	m.Layers = make([]Layer, cfg.Layers)
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		l := &m.Layers[i]
		l.AttnNorm = ld.vector(p+"attn_norm.weight", cfg.Dim)
		l.FFNNorm = ld.vector(p+"ffn_norm.weight", cfg.Dim)
		if _, fused := f.Tensor(p + "attn_qkv.weight"); fused {
			if qkv := ld.projSplit(p+"attn_qkv.weight", cfg.Dim, cfg.QDim(), kv, kv); qkv != nil {
				l.Q, l.K, l.V = qkv[0], qkv[1], qkv[2]
			}
		} else {
			l.Q = ld.proj(p+"attn_q.weight", cfg.QDim(), cfg.Dim)
			l.K = ld.proj(p+"attn_k.weight", kv, cfg.Dim)
			l.V = ld.proj(p+"attn_v.weight", kv, cfg.Dim)
		}
		l.O = ld.proj(p+"attn_output.weight", cfg.Dim, cfg.QDim())
		ld.archLayer(l, p)
		if cfg.Experts == 0 && cfg.FusedGateUp {
			l.FFN = &FFN{Down: ld.proj(p+"ffn_down.weight", cfg.Dim, cfg.FFN)}
			if gu := ld.projSplit(p+"ffn_up.weight", cfg.Dim, cfg.FFN, cfg.FFN); gu != nil {
				l.FFN.Gate, l.FFN.Up = gu[0], gu[1]
			}
		} else if cfg.Experts == 0 {
			l.FFN = &FFN{
				Gate: ld.proj(p+"ffn_gate.weight", cfg.FFN, cfg.Dim),
				Up:   ld.proj(p+"ffn_up.weight", cfg.FFN, cfg.Dim),
				Down: ld.proj(p+"ffn_down.weight", cfg.Dim, cfg.FFN),
			}
		} else {
			l.Router = ld.matrix(p+"ffn_gate_inp.weight", cfg.Experts, cfg.Dim)
			gates := ld.experts(p+"ffn_gate_exps.weight", cfg.FFN, cfg.Dim)
			ups := ld.experts(p+"ffn_up_exps.weight", cfg.FFN, cfg.Dim)
			downs := ld.experts(p+"ffn_down_exps.weight", cfg.Dim, cfg.FFN)
			if ld.err == nil {
				for e := range cfg.Experts {
					l.Experts = append(l.Experts, &FFN{Gate: gates[e], Up: ups[e], Down: downs[e]})
				}
			}
		}
		if ld.err != nil {
			return nil, ld.err
		}
	}
	if ld.err != nil {
		return nil, ld.err
	}
	m.Quant = "mixed"
	if len(ld.types) == 1 {
		for t := range ld.types {
			m.Quant = t.String()
		}
	}
	m.Params = ld.params
	if err := ld.ropeFreqs(); err != nil {
		return nil, err
	}
	return m, nil
}

// loader reads tensors and remembers the first error.
type loader struct {
	f      *gguf.File
	m      *Model
	err    error
	types  map[gguf.Type]bool
	params int64
}

func (ld *loader) read(name string, shape ...int) (gguf.TensorInfo, []byte) {
	if ld.err != nil {
		return gguf.TensorInfo{}, nil
	}
	ti, ok := ld.f.Tensor(name)
	if !ok {
		ld.err = fmt.Errorf("llm: %s: tensor %q missing", ld.f.Path, name)
		return ti, nil
	}
	if len(ti.Shape) != len(shape) {
		ld.err = fmt.Errorf("llm: tensor %q has shape %v, want %v", name, ti.Shape, shape)
		return ti, nil
	}
	for i, d := range shape {
		if ti.Shape[i] != uint64(d) {
			ld.err = fmt.Errorf("llm: tensor %q has shape %v, want %v", name, ti.Shape, shape)
			return ti, nil
		}
	}
	if !ti.Type.Supported() {
		ld.err = fmt.Errorf("llm: tensor %q has type %v; the embedded engine supports F32, F16, BF16, Q8_0, Q4_K and Q6_K", name, ti.Type)
		return ti, nil
	}
	raw, err := ld.f.ReadTensor(ti, nil)
	if err != nil {
		ld.err = fmt.Errorf("llm: %w", err)
		return ti, nil
	}
	ld.params += ti.Elems
	return ti, raw
}

// matrix reads a rows x cols matrix (GGUF shape [cols, rows]).
func (ld *loader) matrix(name string, rows, cols int) *Matrix {
	ti, raw := ld.read(name, cols, rows)
	if ld.err != nil {
		return nil
	}
	m, err := NewMatrix(ti.Type, rows, cols, raw)
	if err != nil {
		ld.err = fmt.Errorf("llm: tensor %q: %w", name, err)
	}
	return m
}

// proj reads a projection matrix and records its type for Model.Quant.
func (ld *loader) proj(name string, rows, cols int) *Matrix {
	m := ld.matrix(name, rows, cols)
	if m != nil {
		ld.types[m.Stored] = true
	}
	return m
}

// experts reads a 3-D expert tensor (GGUF shape [cols, rows, experts]) as
// one matrix per expert.
func (ld *loader) experts(name string, rows, cols int) []*Matrix {
	n := ld.m.Cfg.Experts
	ti, raw := ld.read(name, cols, rows, n)
	if ld.err != nil {
		return nil
	}
	ld.types[ti.Type] = true
	per := len(raw) / n
	out := make([]*Matrix, n)
	for e := range out {
		m, err := NewMatrix(ti.Type, rows, cols, raw[e*per:(e+1)*per:(e+1)*per])
		if err != nil {
			ld.err = fmt.Errorf("llm: tensor %q expert %d: %w", name, e, err)
			return nil
		}
		out[e] = m
	}
	return out
}

// vector reads a 1-D tensor as float32.
func (ld *loader) vector(name string, n int) []float32 {
	ti, raw := ld.read(name, n)
	if ld.err != nil {
		return nil
	}
	v := make([]float32, n)
	if err := gguf.DecodeRow(v, ti.Type, raw); err != nil {
		ld.err = fmt.Errorf("llm: tensor %q: %w", name, err)
	}
	return v
}

// ExpertFunc runs expert e of layer l over a batch of input rows (each Dim
// long, already normalised) and returns one output row per input row. The
// engine calls it for every expert batch of an MoE layer; the default runs
// the expert locally (Model.ExpertForward). A remote holder can stand in.
type ExpertFunc func(ctx context.Context, layer, expert int, rows [][]float32) ([][]float32, error)

// ExpertBatch is the batch of one expert in an MoE layer: the input rows
// of the positions routed to it, in position order.
type ExpertBatch struct {
	Expert    int
	Positions []int // each row's position in the sequence (what a holder's receipt names)
	Rows      [][]float32
}

// ExpertLayerFunc runs every expert batch of MoE layer l at once (batches
// in ascending expert order, each expert at most once) and returns one
// result per batch, in order, each one output row per input row.
type ExpertLayerFunc func(ctx context.Context, layer int, batches []ExpertBatch) ([][][]float32, error)

package llm

import (
	"fmt"
	"math"
)

// archLayer reads the tensors of layer l (prefix p) that only some
// architectures have, under the names llama.cpp gives them.
func (ld *loader) archLayer(l *Layer, p string) {
	c := &ld.m.Cfg
	kv := c.KVDim()
	if c.QKVBias {
		l.QBias = ld.vector(p+"attn_q.bias", c.QDim())
		l.KBias = ld.vector(p+"attn_k.bias", kv)
		l.VBias = ld.vector(p+"attn_v.bias", kv)
	} else {
		// llama.cpp's llama loader takes them when present.
		l.QBias = ld.optVector(p+"attn_q.bias", c.QDim())
		l.KBias = ld.optVector(p+"attn_k.bias", kv)
		l.VBias = ld.optVector(p+"attn_v.bias", kv)
	}
	l.OBias = ld.optVector(p+"attn_output.bias", c.Dim)
	if c.QKNorm {
		l.QNorm = ld.vector(p+"attn_q_norm.weight", c.HeadDim)
		l.KNorm = ld.vector(p+"attn_k_norm.weight", c.HeadDim)
	}
	if c.Gemma {
		l.PostAttnNorm = ld.vector(p+"post_attention_norm.weight", c.Dim)
		l.PostFFNNorm = ld.vector(p+"post_ffw_norm.weight", c.Dim)
	}
}

// projSplit reads a projection whose rows stack several matrices (Phi-3's
// fused attn_qkv and gate+up ffn_up) and returns them in order, each
// exactly the matrix its rows would make on their own.
func (ld *loader) projSplit(name string, cols int, rows ...int) []*Matrix {
	total := 0
	for _, r := range rows {
		total += r
	}
	ti, raw := ld.read(name, cols, total)
	if ld.err != nil {
		return nil
	}
	ld.types[ti.Type] = true
	rb := len(raw) / total
	out := make([]*Matrix, len(rows))
	at := 0
	for i, r := range rows {
		m, err := NewMatrix(ti.Type, r, cols, raw[at*rb:(at+r)*rb:(at+r)*rb])
		if err != nil {
			ld.err = fmt.Errorf("llm: tensor %q part %d: %w", name, i, err)
			return nil
		}
		out[i] = m
		at += r
	}
	return out
}

// optVector is vector for a tensor the file may omit (nil then).
func (ld *loader) optVector(name string, n int) []float32 {
	if _, ok := ld.f.Tensor(name); !ok {
		return nil
	}
	return ld.vector(name, n)
}

// ropeFreqs computes the rope inverse frequencies of global and sliding
// layers: base^(-2i/d), times the linear scale, divided by the i-th factor
// of rope_freqs.weight when the file has one (Llama 3.1's long-context
// factors, which llama.cpp applies as freq_factors).
func (ld *loader) ropeFreqs() error {
	m := ld.m
	c := &m.Cfg
	factors := ld.optVector("rope_freqs.weight", c.RopeDim/2)
	if ld.err != nil {
		return ld.err
	}
	m.RopeFactors = factors
	for i, f := range factors {
		if !(f > 0) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("llm: rope_freqs.weight[%d] = %v is not a positive factor", i, f)
		}
	}
	freqs := func(base, scale float64) []float64 {
		out := make([]float64, c.RopeDim/2)
		lb := logDet(base)
		for i := range out {
			out[i] = expDet(-r64(float64(2*i)/float64(c.RopeDim)*lb)) * scale
			if factors != nil {
				out[i] /= float64(factors[i])
			}
		}
		return out
	}
	m.invFreq = freqs(c.RopeBase, c.RopeScale)
	m.invFreqSWA = freqs(c.RopeBaseSWA, c.RopeScaleSWA)
	return nil
}

// ropeFreqs returns the inverse frequencies layer l rotates by.
func (m *Model) ropeFreqs(l int) []float64 {
	if m.Cfg.Sliding(l) {
		return m.invFreqSWA
	}
	return m.invFreq
}

package llm

import (
	"context"
	"fmt"
	"math"
)

// Sequence is one token sequence being processed: its KV cache, position
// and scratch space. A Sequence is used by one goroutine at a time; many
// Sequences can share a Model.
type Sequence struct {
	m       *Model
	threads int
	expert  ExpertFunc
	layer   ExpertLayerFunc // when set, runs every expert batch of a layer in one call
	maxLen  int
	n       int         // positions in the cache
	k, v    [][]float32 // per layer: positions x KVDim
	att     scratch     // attention score buffers
	bufs    map[string][]float32
}

// NewSequence starts an empty sequence of at most maxLen positions, computed
// on threads goroutines. expert, if not nil, runs MoE expert batches.
func (m *Model) NewSequence(threads, maxLen int, expert ExpertFunc) *Sequence {
	return &Sequence{
		m: m, threads: max(threads, 1), expert: expert,
		maxLen: min(max(maxLen, 1), m.Cfg.Context),
		k:      make([][]float32, m.Cfg.Layers), v: make([][]float32, m.Cfg.Layers),
		bufs: map[string][]float32{},
	}
}

// Len is the number of positions processed so far.
func (s *Sequence) Len() int { return s.n }

func (s *Sequence) buf(name string, n int) []float32 {
	b := s.bufs[name]
	if cap(b) < n {
		b = make([]float32, n)
		s.bufs[name] = b
	}
	return b[:n]
}

// grow makes room in the cache for n positions.
func (s *Sequence) grow(n int) {
	kv := s.m.Cfg.KVDim()
	if len(s.k[0]) >= n*kv {
		return
	}
	c := min(max(n, 2*len(s.k[0])/kv, 64), s.maxLen)
	for l := range s.k {
		k := make([]float32, c*kv)
		copy(k, s.k[l])
		v := make([]float32, c*kv)
		copy(v, s.v[l])
		s.k[l], s.v[l] = k, v
	}
}

// Forward runs tokens through the model at the next positions, appending
// their keys and values to the cache, and returns the logits of
// tokens[from:] (nil when from >= len(tokens)).
func (s *Sequence) Forward(ctx context.Context, tokens []int, from int) ([][]float32, error) {
	cfg := &s.m.Cfg
	B := len(tokens)
	if B == 0 {
		return nil, nil
	}
	if s.n+B > s.maxLen {
		return nil, fmt.Errorf("llm: sequence of %d tokens exceeds the context length %d", s.n+B, s.maxLen)
	}
	for _, t := range tokens {
		if t < 0 || t >= cfg.Vocab {
			return nil, fmt.Errorf("llm: token %d outside the vocabulary of %d", t, cfg.Vocab)
		}
	}
	s.grow(s.n + B)
	dim, kvDim, qDim := cfg.Dim, cfg.KVDim(), cfg.QDim()
	x := s.buf("x", B*dim)
	xb := s.buf("xb", B*dim)
	q := s.buf("q", B*qDim)
	kb := s.buf("k", B*kvDim)
	vb := s.buf("v", B*kvDim)
	att := s.buf("att", B*qDim)
	tmp := s.buf("tmp", dim)
	for b, t := range tokens {
		copy(x[b*dim:(b+1)*dim], s.m.Embed.Row(t, tmp))
	}
	if cfg.Gemma {
		scale(x, float32(math.Sqrt(float64(dim))))
	}
	for l := range s.m.Layers {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
		layer := &s.m.Layers[l]
		s.norms(xb, x, layer.AttnNorm, B)
		matmuls(s.threads, product{q, layer.Q, xb, B}, product{kb, layer.K, xb, B}, product{vb, layer.V, xb, B})
		s.prepareQKV(l, q, kb, vb, B)
		copy(s.k[l][s.n*kvDim:], kb)
		copy(s.v[l][s.n*kvDim:], vb)
		s.attention(l, q, att, B)
		matmul(s.threads, xb, layer.O, att, B)
		addRows(xb, layer.OBias, B)
		if layer.PostAttnNorm != nil {
			s.norms(xb, xb, layer.PostAttnNorm, B)
		}
		add(x, xb)
		s.norms(xb, x, layer.FFNNorm, B)
		out := s.buf("ffnout", B*dim)
		if layer.FFN != nil {
			s.ffn(layer.FFN, xb, out, B)
		} else if err := s.moe(ctx, l, xb, out, B); err != nil {
			return nil, err
		}
		if layer.PostFFNNorm != nil {
			s.norms(out, out, layer.PostFFNNorm, B)
		}
		add(x, out)
	}
	s.n += B
	if from >= B {
		return nil, nil
	}
	n := B - from
	for b := from; b < B; b++ {
		rmsNorm(xb[(b-from)*dim:(b-from+1)*dim], x[b*dim:(b+1)*dim], s.m.OutNorm, cfg.Eps)
	}
	flat := make([]float32, n*cfg.Vocab)
	matmul(s.threads, flat, s.m.Output, xb, n)
	if cfg.FinalSoftcap != 0 {
		softcap(flat, float32(cfg.FinalSoftcap))
	}
	logits := make([][]float32, n)
	for i := range logits {
		logits[i] = flat[i*cfg.Vocab : (i+1)*cfg.Vocab : (i+1)*cfg.Vocab]
	}
	return logits, nil
}

func add(x, y []float32) {
	y = y[:len(x)]
	for i := range x {
		x[i] += y[i]
	}
}

// attention computes causal grouped-query attention for the batch's queries
// against the cache; each (token, head) is one job computed in a fixed order.
func (s *Sequence) attention(l int, q, out []float32, B int) {
	cfg := &s.m.Cfg
	qDim, kvDim, hd := cfg.QDim(), cfg.KVDim(), cfg.HeadDim
	group := cfg.Heads / cfg.KVHeads
	sc32 := float32(cfg.AttnScale)
	window := s.n + B
	if cfg.Sliding(l) {
		window = cfg.SlidingWindow
	}
	kc, vc := s.k[l], s.v[l]
	for w := 0; w < s.threads; w++ {
		s.att.get(w, min(s.n+B, window))
	}
	parallelFor(s.threads, B*cfg.Heads, 1, func(w, lo, hi int) {
		for j := lo; j < hi; j++ {
			b, h := j/cfg.Heads, j%cfg.Heads
			pos := s.n + b
			first := max(0, pos-window+1) // older positions are outside the sliding window
			qh := q[b*qDim+h*hd : b*qDim+(h+1)*hd]
			off := first*kvDim + (h/group)*hd
			sc := s.att.bufs[w][:pos+1-first]
			kern.scores(sc, qh, kc[off:], kvDim)
			for p := range sc {
				sc[p] *= sc32
			}
			if cfg.AttnSoftcap != 0 {
				softcap(sc, float32(cfg.AttnSoftcap))
			}
			softmaxInPlace(sc)
			kern.wsum(out[b*qDim+h*hd:b*qDim+(h+1)*hd], sc, vc[off:], kvDim)
		}
	})
}

// ffn runs a SwiGLU block over B rows of in, writing B rows to out.
func (s *Sequence) ffn(f *FFN, in, out []float32, B int) {
	hidden := f.Gate.Rows
	g := s.buf("hb", B*hidden)
	u := s.buf("hb2", B*hidden)
	matmuls(s.threads, product{g, f.Gate, in, B}, product{u, f.Up, in, B})
	// Elementwise, so splitting it over threads changes no bit.
	parallelFor(s.threads, B, max(1, serialWork/(16*hidden)), func(_, lo, hi int) {
		if s.m.Cfg.Gemma {
			geglu(g[lo*hidden:hi*hidden], u[lo*hidden:hi*hidden])
		} else {
			swiglu(g[lo*hidden:hi*hidden], u[lo*hidden:hi*hidden])
		}
	})
	matmul(s.threads, out, f.Down, g, B)
}

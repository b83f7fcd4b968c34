package llm

import (
	"fmt"
	"math"
	"sort"

	"github.com/tenzrod/tenzrod/inference"
)

// ReferenceForward returns the logits of every position of tokens from a
// direct float64 transcription of the forward pass (RMSNorm, RoPE on
// adjacent or NEOX pairs, grouped-query causal attention with the
// architecture's biases, head norms, soft-capping and sliding windows,
// SwiGLU, GeGLU or a top-k mixture of experts) that shares no kernel with
// the engine. It is slow (no cache
// reuse across calls, no batching, one goroutine) and exists to check the
// engine and to calibrate commitment tolerances against an honest but
// different implementation of the same weights.
func (m *Model) ReferenceForward(tokens []int) ([][]float64, error) {
	for _, t := range tokens {
		if t < 0 || t >= m.Cfg.Vocab {
			return nil, fmt.Errorf("llm: token %d outside the vocabulary of %d", t, m.Cfg.Vocab)
		}
	}
	c := m.Cfg
	vec := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	matvec := func(w *Matrix, x []float64) []float64 {
		out := make([]float64, w.Rows)
		buf := make([]float32, w.Cols)
		for r := range out {
			for i, wv := range w.Row(r, buf) {
				out[r] += float64(wv) * x[i]
			}
		}
		return out
	}
	norm := func(x []float64, w []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+float64(c.Eps))
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * s * float64(w[i])
		}
		return out
	}
	rope := func(x []float64, pos, l int) {
		base, scale := c.RopeBase, c.RopeScale
		if c.Sliding(l) {
			base, scale = c.RopeBaseSWA, c.RopeScaleSWA
		}
		half := c.RopeDim / 2
		for h := 0; h < len(x)/c.HeadDim; h++ {
			for i := 0; i < half; i++ {
				th := float64(pos) * math.Pow(base, -float64(2*i)/float64(c.RopeDim)) * scale
				if m.RopeFactors != nil {
					th /= float64(m.RopeFactors[i])
				}
				i0, i1 := h*c.HeadDim+2*i, h*c.HeadDim+2*i+1
				if c.RopeNeox {
					i0, i1 = h*c.HeadDim+i, h*c.HeadDim+i+half
				}
				a, b := x[i0], x[i1]
				x[i0] = a*math.Cos(th) - b*math.Sin(th)
				x[i1] = a*math.Sin(th) + b*math.Cos(th)
			}
		}
	}
	addVec := func(x []float64, b []float32) {
		for i := range b {
			x[i] += float64(b[i])
		}
	}
	headNorm := func(x []float64, w []float32) {
		for h := 0; h < len(x)/c.HeadDim; h++ {
			copy(x[h*c.HeadDim:], norm(x[h*c.HeadDim:(h+1)*c.HeadDim], w))
		}
	}
	capped := func(x, cap float64) float64 {
		if cap == 0 {
			return x
		}
		return cap * math.Tanh(x/cap)
	}
	act := func(g float64) float64 { return g / (1 + math.Exp(-g)) }
	if c.Gemma {
		act = func(g float64) float64 {
			return 0.5 * g * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(g+0.044715*g*g*g)))
		}
	}
	ffn := func(f *FFN, x []float64) []float64 {
		g, u := matvec(f.Gate, x), matvec(f.Up, x)
		for i := range g {
			g[i] = act(g[i]) * u[i]
		}
		return matvec(f.Down, g)
	}
	ks := make([][][]float64, c.Layers)
	vs := make([][][]float64, c.Layers)
	var logits [][]float64
	buf := make([]float32, c.Dim)
	for pos, tok := range tokens {
		x := vec(m.Embed.Row(tok, buf))
		if c.Gemma {
			for i := range x {
				x[i] *= math.Sqrt(float64(c.Dim))
			}
		}
		for l := range m.Layers {
			L := &m.Layers[l]
			xb := norm(x, L.AttnNorm)
			q, k, v := matvec(L.Q, xb), matvec(L.K, xb), matvec(L.V, xb)
			addVec(q, L.QBias)
			addVec(k, L.KBias)
			addVec(v, L.VBias)
			if L.QNorm != nil {
				headNorm(q, L.QNorm)
				headNorm(k, L.KNorm)
			}
			rope(q, pos, l)
			rope(k, pos, l)
			ks[l], vs[l] = append(ks[l], k), append(vs[l], v)
			first := 0
			if c.Sliding(l) {
				first = max(0, pos-c.SlidingWindow+1)
			}
			att := make([]float64, c.QDim())
			for h := 0; h < c.Heads; h++ {
				kvh := h / (c.Heads / c.KVHeads)
				sc := make([]float64, pos+1)
				mx := math.Inf(-1)
				for p := first; p <= pos; p++ {
					for d := 0; d < c.HeadDim; d++ {
						sc[p] += q[h*c.HeadDim+d] * ks[l][p][kvh*c.HeadDim+d]
					}
					sc[p] = capped(sc[p]*c.AttnScale, c.AttnSoftcap)
					mx = math.Max(mx, sc[p])
				}
				var sum float64
				for p := first; p <= pos; p++ {
					sc[p] = math.Exp(sc[p] - mx)
					sum += sc[p]
				}
				for p := first; p <= pos; p++ {
					for d := 0; d < c.HeadDim; d++ {
						att[h*c.HeadDim+d] += sc[p] / sum * vs[l][p][kvh*c.HeadDim+d]
					}
				}
			}
			o := matvec(L.O, att)
			addVec(o, L.OBias)
			if L.PostAttnNorm != nil {
				o = norm(o, L.PostAttnNorm)
			}
			for i := range x {
				x[i] += o[i]
			}
			xb = norm(x, L.FFNNorm)
			var out []float64
			if L.FFN != nil {
				out = ffn(L.FFN, xb)
			} else {
				rl := matvec(L.Router, xb)
				order := make([]int, len(rl))
				for i := range order {
					order[i] = i
				}
				sort.SliceStable(order, func(a, b int) bool { return rl[order[a]] > rl[order[b]] })
				var z float64
				for _, e := range order[:c.ExpertsUsed] {
					z += math.Exp(rl[e] - rl[order[0]])
				}
				out = make([]float64, c.Dim)
				for _, e := range order[:c.ExpertsUsed] {
					w := math.Exp(rl[e]-rl[order[0]]) / z
					for i, y := range ffn(L.Experts[e], xb) {
						out[i] += w * y
					}
				}
			}
			if L.PostFFNNorm != nil {
				out = norm(out, L.PostFFNNorm)
			}
			for i := range x {
				x[i] += out[i]
			}
		}
		lg := matvec(m.Output, norm(x, m.OutNorm))
		for i := range lg {
			lg[i] = capped(lg[i], c.FinalSoftcap)
		}
		logits = append(logits, lg)
	}
	return logits, nil
}

// ReferenceScore is Engine.Score computed with ReferenceForward.
func (m *Model) ReferenceScore(prompt, output []int, k int) ([][]inference.LogProb, error) {
	if len(prompt) == 0 || len(output) == 0 {
		return nil, fmt.Errorf("llm: reference score needs a prompt and an output")
	}
	all := append(append([]int(nil), prompt...), output[:len(output)-1]...)
	logits, err := m.ReferenceForward(all)
	if err != nil {
		return nil, err
	}
	out := make([][]inference.LogProb, 0, len(output))
	for _, l := range logits[len(prompt)-1:] {
		ls := logSoftmax64(l)
		f := make([]float32, len(ls))
		for i, v := range ls {
			f[i] = float32(v)
		}
		top := TopLogProbs(f, k)
		for i := range top {
			top[i].LogProb = float32(ls[top[i].ID])
		}
		out = append(out, top)
	}
	return out, nil
}

func logSoftmax64(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - mx - math.Log(s)
	}
	return out
}

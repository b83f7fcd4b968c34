package llm

import (
	"fmt"
	"math"
	"sort"

	"github.com/tenzrod/tenzrod/inference"
)

// ReferenceForward returns the logits of every position of tokens from a
// direct float64 transcription of the llama forward pass (RMSNorm, RoPE on
// adjacent pairs, grouped-query causal attention, SwiGLU or a top-k mixture
// of experts) that shares no kernel with the engine. It is slow (no cache
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
	rope := func(x []float64, pos int) {
		for h := 0; h < len(x)/c.HeadDim; h++ {
			for i := 0; i < c.RopeDim/2; i++ {
				th := float64(pos) * math.Pow(c.RopeBase, -float64(2*i)/float64(c.RopeDim))
				a, b := x[h*c.HeadDim+2*i], x[h*c.HeadDim+2*i+1]
				x[h*c.HeadDim+2*i] = a*math.Cos(th) - b*math.Sin(th)
				x[h*c.HeadDim+2*i+1] = a*math.Sin(th) + b*math.Cos(th)
			}
		}
	}
	ffn := func(f *FFN, x []float64) []float64 {
		g, u := matvec(f.Gate, x), matvec(f.Up, x)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		return matvec(f.Down, g)
	}
	ks := make([][][]float64, c.Layers)
	vs := make([][][]float64, c.Layers)
	var logits [][]float64
	buf := make([]float32, c.Dim)
	for pos, tok := range tokens {
		x := vec(m.Embed.Row(tok, buf))
		for l := range m.Layers {
			L := &m.Layers[l]
			xb := norm(x, L.AttnNorm)
			q, k, v := matvec(L.Q, xb), matvec(L.K, xb), matvec(L.V, xb)
			rope(q, pos)
			rope(k, pos)
			ks[l], vs[l] = append(ks[l], k), append(vs[l], v)
			att := make([]float64, c.Dim)
			for h := 0; h < c.Heads; h++ {
				kvh := h / (c.Heads / c.KVHeads)
				sc := make([]float64, pos+1)
				mx := math.Inf(-1)
				for p := range sc {
					for d := 0; d < c.HeadDim; d++ {
						sc[p] += q[h*c.HeadDim+d] * ks[l][p][kvh*c.HeadDim+d]
					}
					sc[p] /= math.Sqrt(float64(c.HeadDim))
					mx = math.Max(mx, sc[p])
				}
				var sum float64
				for p := range sc {
					sc[p] = math.Exp(sc[p] - mx)
					sum += sc[p]
				}
				for p := range sc {
					for d := 0; d < c.HeadDim; d++ {
						att[h*c.HeadDim+d] += sc[p] / sum * vs[l][p][kvh*c.HeadDim+d]
					}
				}
			}
			for i, o := range matvec(L.O, att) {
				x[i] += o
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
			for i := range x {
				x[i] += out[i]
			}
		}
		logits = append(logits, matvec(m.Output, norm(x, m.OutNorm)))
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

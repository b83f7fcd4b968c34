package llm

import "math"

// Operations of the architectures beyond llama (arch.go). Like ops.go they
// fix every rounding, so results stay the same on every kernel set.

// scale multiplies x by a.
func scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// addRows adds bias to each of the B rows of x (nothing when bias is nil).
func addRows(x, bias []float32, B int) {
	if bias == nil {
		return
	}
	n := len(bias)
	for b := 0; b < B; b++ {
		add(x[b*n:(b+1)*n], bias)
	}
}

// norms RMS-normalises each of the B rows of x by w into out (which may be x).
func (s *Sequence) norms(out, x, w []float32, B int) {
	n := len(w)
	for b := 0; b < B; b++ {
		rmsNorm(out[b*n:(b+1)*n], x[b*n:(b+1)*n], w, s.m.Cfg.Eps)
	}
}

// prepareQKV turns layer l's projections of B positions into what the
// attention and the cache take: biases added, each head of Q and K
// normalised when the architecture says so, then rotated.
func (s *Sequence) prepareQKV(l int, q, k, v []float32, B int) {
	cfg := &s.m.Cfg
	layer := &s.m.Layers[l]
	qDim, kvDim, hd := cfg.QDim(), cfg.KVDim(), cfg.HeadDim
	addRows(q, layer.QBias, B)
	addRows(k, layer.KBias, B)
	addRows(v, layer.VBias, B)
	if layer.QNorm != nil {
		for h := 0; h < B*cfg.Heads; h++ {
			rmsNorm(q[h*hd:(h+1)*hd], q[h*hd:(h+1)*hd], layer.QNorm, cfg.Eps)
		}
		for h := 0; h < B*cfg.KVHeads; h++ {
			rmsNorm(k[h*hd:(h+1)*hd], k[h*hd:(h+1)*hd], layer.KNorm, cfg.Eps)
		}
	}
	rot := rope
	if cfg.RopeNeox {
		rot = ropeNeox
	}
	freqs := s.m.ropeFreqs(l)
	for b := 0; b < B; b++ {
		pos := s.n + b
		rot(q[b*qDim:(b+1)*qDim], cfg.Heads, hd, cfg.RopeDim, pos, freqs)
		rot(k[b*kvDim:(b+1)*kvDim], cfg.KVHeads, hd, cfg.RopeDim, pos, freqs)
	}
}

// ropeNeox rotates the pairs (i, i+ropeDim/2) of each head of x (GGML's
// NEOX mode) for position pos, with rope's roundings.
func ropeNeox(x []float32, heads, headDim, ropeDim int, pos int, invFreq []float64) {
	half := ropeDim / 2
	for i := 0; i < half; i++ {
		sn, cs := sincosDet(r64(float64(pos) * invFreq[i]))
		c, s := float32(cs), float32(sn)
		for h := 0; h < heads; h++ {
			v := x[h*headDim : h*headDim+ropeDim : h*headDim+ropeDim]
			x0, x1 := v[i], v[i+half]
			v[i] = float32(x0*c) - float32(x1*s)
			v[i+half] = float32(x0*s) + float32(x1*c)
		}
	}
}

// softcap replaces each x[i] by c*tanh(x[i]/c) (Gemma 2's soft-capping).
func softcap(x []float32, c float32) {
	var e [expChunk]float64
	for o := 0; o < len(x); o += expChunk {
		xc := x[o:min(o+expChunk, len(x))]
		ec := e[:len(xc)]
		for i, v := range xc {
			ec[i] = -2 * math.Abs(float64(v)/float64(c))
		}
		expInPlace(ec)
		for i, v := range xc {
			// tanh|y| = (1-e^-2|y|)/(1+e^-2|y|): no overflow, no cancellation sign issue.
			t := (1 - ec[i]) / (1 + ec[i])
			xc[i] = float32(math.Copysign(t, float64(v)) * float64(c))
		}
	}
}

// geluC is sqrt(2/pi), of the tanh approximation of GELU that GGML uses.
const geluC = 0.7978845608028654

// geglu writes gelu(gate) * up into gate, GELU by its tanh approximation
// 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x³))) computed in float64.
func geglu(gate, up []float32) {
	up = up[:len(gate)]
	var e [expChunk]float64
	for o := 0; o < len(gate); o += expChunk {
		gc := gate[o:min(o+expChunk, len(gate))]
		ec := e[:len(gc)]
		for i, g := range gc {
			x := float64(g)
			ec[i] = -2 * math.Abs(geluC*r64(x+r64(0.044715*r64(x*r64(x*x)))))
		}
		expInPlace(ec)
		for i, g := range gc {
			x := float64(g)
			t := math.Copysign((1-ec[i])/(1+ec[i]), x)
			gc[i] = float32(r64(0.5*x)*(1+t)) * up[o+i]
		}
	}
}

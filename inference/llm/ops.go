package llm

import "math"

// The kernels below fix the order of every floating-point sum, and convert
// each product to float32 explicitly, which the Go spec guarantees prevents
// fusing multiply-adds. A result therefore depends only on its inputs, not on
// the thread count, the batch shape or the CPU architecture.

// dot returns the dot product of a and b (len(b) >= len(a)) with eight
// interleaved partial sums.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += float32(aa[0] * bb[0])
		s1 += float32(aa[1] * bb[1])
		s2 += float32(aa[2] * bb[2])
		s3 += float32(aa[3] * bb[3])
		s4 += float32(aa[4] * bb[4])
		s5 += float32(aa[5] * bb[5])
		s6 += float32(aa[6] * bb[6])
		s7 += float32(aa[7] * bb[7])
	}
	for ; i < n; i++ {
		s0 += float32(a[i] * b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// axpy adds a*x to y.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += float32(a * x[i])
	}
}

// rmsNorm writes x / rms(x) * w to out.
func rmsNorm(out, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += r64(float64(v) * float64(v))
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	w = w[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		out[i] = float32(v*scale) * w[i]
	}
}

// expChunk is how many exponentials the functions below compute at a time
// with the kernel set's exp (on the stack).
const expChunk = 64

// softmaxInPlace turns x into probabilities.
func softmaxInPlace(x []float32) {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var sum float64
	var e [expChunk]float64
	for c := 0; c < len(x); c += expChunk {
		xc := x[c:min(c+expChunk, len(x))]
		ec := e[:len(xc)]
		for i, v := range xc {
			ec[i] = float64(v - m)
		}
		expInPlace(ec)
		for i, v := range ec {
			xc[i] = float32(v)
			sum += v
		}
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// swiglu writes silu(gate) * up into gate.
func swiglu(gate, up []float32) {
	up = up[:len(gate)]
	var e [expChunk]float64
	for c := 0; c < len(gate); c += expChunk {
		gc := gate[c:min(c+expChunk, len(gate))]
		ec := e[:len(gc)]
		for i, g := range gc {
			ec[i] = -float64(g)
		}
		expInPlace(ec)
		for i, g := range gc {
			s := float32(float64(g) / (1 + ec[i]))
			gc[i] = s * up[c+i]
		}
	}
}

// rope rotates adjacent pairs of each head of x (GGML "normal" mode) for
// position pos.
func rope(x []float32, heads, headDim, ropeDim int, pos int, invFreq []float64) {
	for i := 0; i < ropeDim/2; i++ {
		sn, cs := sincosDet(r64(float64(pos) * invFreq[i]))
		c, s := float32(cs), float32(sn)
		for h := 0; h < heads; h++ {
			v := x[h*headDim+2*i : h*headDim+2*i+2 : h*headDim+2*i+2]
			x0, x1 := v[0], v[1]
			v[0] = float32(x0*c) - float32(x1*s)
			v[1] = float32(x0*s) + float32(x1*c)
		}
	}
}

package llm

import (
	"fmt"
	"os"
)

// The inner loops of matrix work come in kernel sets: the pure-Go one below,
// which defines the results, and assembly ones (kernels_amd64.go,
// kernels_arm64.go) chosen at start by CPU feature detection. Every kernel
// computes each output as one dot product in the order of dot (one 8-lane
// accumulator, lane j summing elements 8k+j in k order, then
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))) or, for Q8_0, of dotQ8, with
// products and sums rounded separately (no fused multiply-add). The vector
// kernels therefore give the same bits as the pure-Go ones on every machine;
// they only compute several outputs at once (rows x tokens tiles) so that
// independent accumulators hide the latency of the adds and a weight load
// serves several tokens.
//
// Shapes: a product has the length of its input vector x (rows may be
// longer); the assembly kernels take lengths n%8 == 0 and hand other
// lengths to the pure-Go ones. Q8_0 rows have len(d) blocks of 32.
type kernelSet struct {
	name string
	// f32Rows4 writes the dot product of w[i][:n] and x[:n] to out[i].
	f32Rows4 func(out *[4]float32, w *[4][]float32, x []float32)
	// f32Tile4x3 writes the dot product of w[r][:n] and x[t][:n] to out[4t+r].
	f32Tile4x3 func(out *[12]float32, w *[4][]float32, x *[3][]float32)
	// f16Rows4 writes the dot product of the F16 row w[i] and x to out[i].
	f16Rows4 func(out *[4]float32, w *[4][]uint16, x []float32)
	// q8Rows4 writes the dot product of Q8_0 row i (quants q[i], block
	// scales d[i]) and x to out[i].
	q8Rows4 func(out *[4]float32, q *[4][]int8, d *[4][]float32, x []float32)
	// q8Tile2x4 writes the dot product of Q8_0 row r and x[t] to out[4r+t].
	q8Tile2x4 func(out *[8]float32, q *[2][]int8, d *[2][]float32, x *[4][]float32)
	// exp replaces each x[i] by expDet(x[i]). vecExp says it is the
	// architecture's vector one (archExp), which expInPlace then calls
	// directly.
	exp    func(x []float64)
	vecExp bool
	// axpy adds a*x[i] to y[i] (len(x) >= len(y)).
	axpy func(y []float32, a float32, x []float32)
	// scores writes dot(q, k[p*stride:][:len(q)]) to out[p].
	scores func(out, q, k []float32, stride int)
	// wsum sets o to the sum over p of w[p]*v[p*stride:][:len(o)], in
	// order from zero (as clearing o and calling axpy per position).
	wsum func(o, w, v []float32, stride int)
}

// pureGo is the reference kernel set, and the fallback on CPUs without the
// vector features the assembly needs.
var pureGo = kernelSet{
	name: "go",
	f32Rows4: func(out *[4]float32, w *[4][]float32, x []float32) {
		for i := range out {
			out[i] = dot(w[i][:len(x)], x)
		}
	},
	f32Tile4x3: func(out *[12]float32, w *[4][]float32, x *[3][]float32) {
		for t := range x {
			for r := range w {
				out[4*t+r] = dot(w[r][:len(x[t])], x[t])
			}
		}
	},
	f16Rows4: func(out *[4]float32, w *[4][]uint16, x []float32) {
		for i := range out {
			out[i] = dotF16(w[i][:len(x)], x)
		}
	},
	q8Rows4: func(out *[4]float32, q *[4][]int8, d *[4][]float32, x []float32) {
		for i := range out {
			out[i] = dotQ8(q[i], d[i], x)
		}
	},
	q8Tile2x4: func(out *[8]float32, q *[2][]int8, d *[2][]float32, x *[4][]float32) {
		for r := range q {
			for t := range x {
				out[4*r+t] = dotQ8(q[r], d[r], x[t])
			}
		}
	},
	exp:    pureExp,
	axpy:   axpy,
	scores: scoresGo,
	wsum:   wsumGo,
}

func pureExp(x []float64) {
	for i, v := range x {
		x[i] = expDet(v)
	}
}

// expInPlace is kern.exp by direct calls, so that the compiler can keep
// the callers' stack buffers on the stack (a call through a function value
// moves its arguments to the heap).
func expInPlace(x []float64) {
	if kern.vecExp {
		archExp(x)
	} else {
		pureExp(x)
	}
}

func scoresGo(out, q, k []float32, stride int) {
	n := len(q)
	for p := range out {
		out[p] = dot(q, k[p*stride:p*stride+n])
	}
}

func wsumGo(o, w, v []float32, stride int) {
	n := len(o)
	clear(o)
	for p, wt := range w {
		axpy(o, wt, v[p*stride:p*stride+n])
	}
}

// kern is the kernel set in use; set once at start.
var kern = chooseKernels()

// vectorKernels lists the assembly kernel sets this CPU supports, best
// first (archKernels is in the architecture's kernels file).
var vectorKernels = archKernels()

// chooseKernels picks the best supported set; TENZRO_KERNELS=go forces the
// pure-Go one (for comparisons), another name picks that set if supported.
func chooseKernels() kernelSet {
	want := os.Getenv("TENZRO_KERNELS")
	all := append(append([]kernelSet(nil), vectorKernels...), pureGo)
	if want == "" {
		return all[0]
	}
	for _, k := range all {
		if k.name == want {
			return k
		}
	}
	fmt.Fprintf(os.Stderr, "llm: TENZRO_KERNELS=%q is not supported here; using %s\n", want, all[0].name)
	return all[0]
}

// Kernels names the kernel set in use: "avx2", "neon" or "go". A provider
// logs it when a model warms, since the pure-Go set is several times slower.
func Kernels() string { return kern.name }

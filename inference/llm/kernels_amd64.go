package llm

import (
	"math"

	"github.com/klauspost/cpuid/v2"
)

// AVX2 kernels (f32_amd64.s, f16_amd64.s, q8_amd64.s). F16 needs F16C for
// VCVTPH2PS; every AVX2 CPU has it, but it is a separate CPUID bit.
func archKernels() []kernelSet {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.F16C) {
		return nil
	}
	return []kernelSet{{
		name:       "avx2",
		f32Rows4:   f32Rows4Vec,
		f32Tile4x3: f32Tile4x3Vec,
		f16Rows4:   f16Rows4Vec,
		q8Rows4:    q8Rows4Vec,
		q8Tile2x4:  q8Tile2x4Vec,
		exp:        expDetAVX2,
		axpy:       axpyAVX2,
	}}
}

// expConsts is the constant table of expDet4Asm (exp_amd64.s).
var expConsts = [16]float64{
	expLog2e, expLn2Hi, expLn2Lo, expP1, expP2, expP3, expP4, expP5,
	math.Float64frombits(1 << 63), 0.5, 2, 1, math.Float64frombits(1023),
}

//go:noescape
func expDet4Asm(dst, src *float64, n int, c *[16]float64)

// expDetAVX2 runs expDet4Asm over chunks of x, then recomputes with the
// scalar expDet the lanes outside the main path and the tail.
func expDetAVX2(x []float64) {
	var src [64]float64
	for len(x) > 0 {
		n := copy(src[:], x)
		n4 := n &^ 3
		if n4 > 0 {
			expDet4Asm(&x[0], &src[0], n4, &expConsts)
		}
		for i, v := range src[:n] {
			if a := math.Abs(v); i >= n4 || !(a >= expNearZero && a <= expMainMax) {
				x[i] = expDet(v)
			}
		}
		x = x[n:]
	}
}

//go:noescape
func axpyAsm(y *float32, a float32, x *float32, n int)

func axpyAVX2(y []float32, a float32, x []float32) {
	n := len(y) &^ 7
	if n > 0 {
		_ = x[n-1]
		axpyAsm(&y[0], a, &x[0], n)
	}
	if n < len(y) {
		axpy(y[n:], a, x[n:])
	}
}

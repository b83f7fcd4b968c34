package llm

// NEON kernels (f32_arm64.s, f16_arm64.s, q8_arm64.s). Advanced SIMD and
// the half-precision conversions they use (FCVTL) are part of every ARMv8-A
// CPU, so there is nothing to detect.
func archKernels() []kernelSet {
	return []kernelSet{{
		name:       "neon",
		f32Rows4:   f32Rows4Vec,
		f32Tile4x3: f32Tile4x3Vec,
		f16Rows4:   f16Rows4Vec,
		q8Rows4:    q8Rows4Vec,
		q8Tile2x4:  q8Tile2x4Vec,
		exp:        pureGo.exp, // the float64 polynomial and axpy stay scalar here
		axpy:       pureGo.axpy,
		scores:     pureGo.scores,
		wsum:       pureGo.wsum,
	}}
}

// archExp: the float64 exp stays scalar on arm64.
func archExp(x []float64) { pureExp(x) }

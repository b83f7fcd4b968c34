package llm

import "github.com/klauspost/cpuid/v2"

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
	}}
}

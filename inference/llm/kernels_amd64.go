package llm

import "github.com/klauspost/cpuid/v2"

// AVX2 kernels (f32_amd64.s, f16_amd64.s, q8_amd64.s, exp_amd64.s,
// attn_amd64.s) and AVX-512 prefill tiles (f32_avx512_amd64.s,
// q8_avx512_amd64.s). F16 needs F16C for VCVTPH2PS; every AVX2 CPU has it,
// but it is a separate CPUID bit.
func archKernels() []kernelSet {
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.F16C) {
		return nil
	}
	avx2 := kernelSet{
		name:       "avx2",
		f32Rows4:   f32Rows4Vec,
		f32Tile4x3: f32Tile4x3Vec,
		f16Rows4:   f16Rows4Vec,
		q8Rows4:    q8Rows4Vec,
		q8Tile2x4:  q8Tile2x4Vec,
		exp:        expDetAVX2,
		vecExp:     true,
		axpy:       axpyAVX2,
		scores:     scoresAVX2,
		wsum:       wsumAVX2,
	}
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512DQ) {
		return []kernelSet{avx2}
	}
	// AVX-512 doubles the width of the prefill tiles, which are bound by
	// the vector ports under AVX2 (multiply and add cannot fuse); the
	// decode kernels are bound by memory.
	avx512 := avx2
	avx512.name = "avx512"
	avx512.q8Tile2x4 = q8Tile2x4AVX512
	avx512.f32Tile4x3 = f32Tile4x3AVX512
	return []kernelSet{avx512, avx2}
}

//go:noescape
func f32Tile4x3AVX512Asm(out *[12]float32, w0, w1, w2, w3, x0, x1, x2 *float32, n int)

func f32Tile4x3AVX512(out *[12]float32, w *[4][]float32, x *[3][]float32) {
	n := f32Tile4x3Len(w, x)
	if n == 0 {
		pureGo.f32Tile4x3(out, w, x)
		return
	}
	f32Tile4x3AVX512Asm(out, &w[0][0], &w[1][0], &w[2][0], &w[3][0], &x[0][0], &x[1][0], &x[2][0], n)
}

//go:noescape
func q8Tile2x4AVX512Asm(out *[8]float32, q0, q1 *int8, d0, d1 *float32, x0, x1, x2, x3 *float32, nb int)

func q8Tile2x4AVX512(out *[8]float32, q *[2][]int8, d *[2][]float32, x *[4][]float32) {
	nb := q8Tile2x4Blocks(q, d, x)
	if nb == 0 {
		pureGo.q8Tile2x4(out, q, d, x)
		return
	}
	q8Tile2x4AVX512Asm(out, &q[0][0], &q[1][0], &d[0][0], &d[1][0], &x[0][0], &x[1][0], &x[2][0], &x[3][0], nb)
}

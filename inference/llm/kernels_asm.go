//go:build amd64 || arm64

package llm

// Go sides of the assembly kernels (f32_*.s, f16_*.s, q8_*.s): the
// declarations and wrappers shared by every architecture that has them.

//go:noescape
func f32Rows4Asm(out *[4]float32, w0, w1, w2, w3, x *float32, n int)

//go:noescape
func f32Tile4x3Asm(out *[12]float32, w0, w1, w2, w3, x0, x1, x2 *float32, n int)

//go:noescape
func f16Rows4Asm(out *[4]float32, w0, w1, w2, w3 *uint16, x *float32, n int)

//go:noescape
func q8Rows4Asm(out *[4]float32, q0, q1, q2, q3 *int8, d0, d1, d2, d3 *float32, x *float32, nb int)

//go:noescape
func q8Tile2x4Asm(out *[8]float32, q0, q1 *int8, d0, d1 *float32, x0, x1, x2, x3 *float32, nb int)

// The wrappers check every length (a short slice panics here, as the
// pure-Go kernel's bounds checks would) before the assembly reads memory.

func f32Rows4Vec(out *[4]float32, w *[4][]float32, x []float32) {
	n := rows4Len(w, len(x))
	if n == 0 {
		pureGo.f32Rows4(out, w, x)
		return
	}
	f32Rows4Asm(out, &w[0][0], &w[1][0], &w[2][0], &w[3][0], &x[0], n)
}

func f32Tile4x3Vec(out *[12]float32, w *[4][]float32, x *[3][]float32) {
	n := f32Tile4x3Len(w, x)
	if n == 0 {
		pureGo.f32Tile4x3(out, w, x)
		return
	}
	f32Tile4x3Asm(out, &w[0][0], &w[1][0], &w[2][0], &w[3][0], &x[0][0], &x[1][0], &x[2][0], n)
}

// f32Tile4x3Len is the length an f32 tile kernel (AVX2, AVX-512 or NEON)
// runs at, 0 for one only the pure-Go kernel takes.
func f32Tile4x3Len(w *[4][]float32, x *[3][]float32) int {
	n := len(x[0])
	if len(x[1]) != n || len(x[2]) != n {
		return 0
	}
	return rows4Len(w, n)
}

// rows4Len is n if the kernels take rows of n weights (a positive
// multiple of 8), else 0; a row of w shorter than n panics here.
func rows4Len[T any](w *[4][]T, n int) int {
	if n == 0 || n%8 != 0 {
		return 0
	}
	_, _, _, _ = w[0][n-1], w[1][n-1], w[2][n-1], w[3][n-1]
	return n
}

func f16Rows4Vec(out *[4]float32, w *[4][]uint16, x []float32) {
	n := rows4Len(w, len(x))
	if n == 0 {
		pureGo.f16Rows4(out, w, x)
		return
	}
	f16Rows4Asm(out, &w[0][0], &w[1][0], &w[2][0], &w[3][0], &x[0], n)
}

func q8Rows4Vec(out *[4]float32, q *[4][]int8, d *[4][]float32, x []float32) {
	nb := len(d[0])
	if nb == 0 {
		pureGo.q8Rows4(out, q, d, x)
		return
	}
	n := nb * qk
	for i := range q {
		_, _ = q[i][n-1], d[i][nb-1]
	}
	_ = x[n-1]
	q8Rows4Asm(out, &q[0][0], &q[1][0], &q[2][0], &q[3][0], &d[0][0], &d[1][0], &d[2][0], &d[3][0], &x[0], nb)
}

func q8Tile2x4Vec(out *[8]float32, q *[2][]int8, d *[2][]float32, x *[4][]float32) {
	nb := q8Tile2x4Blocks(q, d, x)
	if nb == 0 {
		pureGo.q8Tile2x4(out, q, d, x)
		return
	}
	q8Tile2x4Asm(out, &q[0][0], &q[1][0], &d[0][0], &d[1][0], &x[0][0], &x[1][0], &x[2][0], &x[3][0], nb)
}

// q8Tile2x4Blocks is the count of blocks a Q8_0 tile kernel runs, 0 for
// a tile only the pure-Go kernel takes.
func q8Tile2x4Blocks(q *[2][]int8, d *[2][]float32, x *[4][]float32) int {
	nb := len(d[0])
	if nb == 0 {
		return 0
	}
	n := nb * qk
	_, _, _, _ = q[0][n-1], q[1][n-1], d[0][nb-1], d[1][nb-1]
	_, _, _, _ = x[0][n-1], x[1][n-1], x[2][n-1], x[3][n-1]
	return nb
}

package llm

import (
	"encoding/binary"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Q8_0 products are computed block by block: within a block of 32 weights,
// the int8 quants are multiplied by the input in eight interleaved partial
// sums (one 8-lane accumulator); the block's sum is then scaled by the
// block's scale and added to the row total. The fp16 scales are decoded once
// at load, and the quants kept apart from them, so that a kernel reads
// aligned runs of quants and plain float32 scales.

const qk = gguf.Q8BlockSize

// unpackQ8 splits encoded Q8_0 rows into quants (one int8 per weight) and
// decoded block scales (one float32 per block).
func unpackQ8(raw []byte, q []int8, d []float32) {
	for b := range d {
		blk := raw[b*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes]
		d[b] = gguf.F16ToF32(binary.LittleEndian.Uint16(blk))
		out := q[b*qk : (b+1)*qk : (b+1)*qk]
		for i, c := range blk[2:34] {
			out[i] = int8(c)
		}
	}
}

// dotQ8 returns the product of a Q8_0 row (quants q, block scales d) and x:
// the reference every Q8_0 kernel reproduces bit for bit.
func dotQ8(q []int8, d, x []float32) float32 {
	var sum float32
	q = q[:len(d)*qk]
	x = x[:len(d)*qk]
	for b, db := range d {
		qb := q[b*qk : (b+1)*qk : (b+1)*qk]
		xx := x[b*qk : (b+1)*qk : (b+1)*qk]
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i := 0; i < qk; i += 8 {
			qq := qb[i : i+8 : i+8]
			xs := xx[i : i+8 : i+8]
			s0 += float32(float32(qq[0]) * xs[0])
			s1 += float32(float32(qq[1]) * xs[1])
			s2 += float32(float32(qq[2]) * xs[2])
			s3 += float32(float32(qq[3]) * xs[3])
			s4 += float32(float32(qq[4]) * xs[4])
			s5 += float32(float32(qq[5]) * xs[5])
			s6 += float32(float32(qq[6]) * xs[6])
			s7 += float32(float32(qq[7]) * xs[7])
		}
		sum += float32(db * (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))))
	}
	return sum
}

// dotF16 returns the product of an F16 row and x in dot's order; the
// conversion of a half to float32 is exact, so this equals decoding the row
// and calling dot.
func dotF16(w []uint16, x []float32) float32 {
	n := len(w)
	x = x[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		ww := w[i : i+8 : i+8]
		xx := x[i : i+8 : i+8]
		s0 += float32(gguf.F16ToF32(ww[0]) * xx[0])
		s1 += float32(gguf.F16ToF32(ww[1]) * xx[1])
		s2 += float32(gguf.F16ToF32(ww[2]) * xx[2])
		s3 += float32(gguf.F16ToF32(ww[3]) * xx[3])
		s4 += float32(gguf.F16ToF32(ww[4]) * xx[4])
		s5 += float32(gguf.F16ToF32(ww[5]) * xx[5])
		s6 += float32(gguf.F16ToF32(ww[6]) * xx[6])
		s7 += float32(gguf.F16ToF32(ww[7]) * xx[7])
	}
	for ; i < n; i++ {
		s0 += float32(gguf.F16ToF32(w[i]) * x[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

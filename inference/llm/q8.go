package llm

import (
	"encoding/binary"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Q8_0 products are computed block by block: within a block of 32 weights,
// the int8 quants are multiplied by the input in eight interleaved partial
// sums; the block's sum is then scaled by the block's fp16 scale and added to
// the row total. dotQ8Raw (one input: decode) reads the quants straight from
// the encoded row; for a batch, unpackQ8 converts a row once and dotQ8 runs
// per input. Both perform the same operations in the same order, so a
// result does not depend on the batch size.

// i8f maps a byte to the float32 value of its int8 reading.
var i8f = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(uint8(i)))
	}
	return t
}()

const qk = gguf.Q8BlockSize

func q8Scale(blk []byte) float32 { return gguf.F16ToF32(binary.LittleEndian.Uint16(blk)) }

// dotQ8Raw returns the product of an encoded Q8_0 row and x.
func dotQ8Raw(raw []byte, x []float32) float32 {
	var sum float32
	nb := len(raw) / gguf.Q8BlockBytes
	x = x[:nb*qk]
	for b := 0; b < nb; b++ {
		blk := raw[b*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes]
		q := blk[2:34:34]
		xx := x[b*qk : (b+1)*qk : (b+1)*qk]
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i := 0; i < qk; i += 8 {
			qq := q[i : i+8 : i+8]
			xs := xx[i : i+8 : i+8]
			s0 += float32(i8f[qq[0]] * xs[0])
			s1 += float32(i8f[qq[1]] * xs[1])
			s2 += float32(i8f[qq[2]] * xs[2])
			s3 += float32(i8f[qq[3]] * xs[3])
			s4 += float32(i8f[qq[4]] * xs[4])
			s5 += float32(i8f[qq[5]] * xs[5])
			s6 += float32(i8f[qq[6]] * xs[6])
			s7 += float32(i8f[qq[7]] * xs[7])
		}
		sum += float32(q8Scale(blk) * (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))))
	}
	return sum
}

// unpackQ8 converts an encoded row into its quants as float32 (qf, one per
// weight) and block scales (d, one per block).
func unpackQ8(raw []byte, qf, d []float32) {
	for b := range d {
		blk := raw[b*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes : (b+1)*gguf.Q8BlockBytes]
		d[b] = q8Scale(blk)
		out := qf[b*qk : (b+1)*qk : (b+1)*qk]
		for i, c := range blk[2:34] {
			out[i] = i8f[c]
		}
	}
}

// dotQ8 returns the product of an unpacked Q8_0 row and x.
func dotQ8(qf, d, x []float32) float32 {
	var sum float32
	x = x[:len(d)*qk]
	for b, db := range d {
		q := qf[b*qk : (b+1)*qk : (b+1)*qk]
		xx := x[b*qk : (b+1)*qk : (b+1)*qk]
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for i := 0; i < qk; i += 8 {
			qq := q[i : i+8 : i+8]
			xs := xx[i : i+8 : i+8]
			s0 += float32(qq[0] * xs[0])
			s1 += float32(qq[1] * xs[1])
			s2 += float32(qq[2] * xs[2])
			s3 += float32(qq[3] * xs[3])
			s4 += float32(qq[4] * xs[4])
			s5 += float32(qq[5] * xs[5])
			s6 += float32(qq[6] * xs[6])
			s7 += float32(qq[7] * xs[7])
		}
		sum += float32(db * (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))))
	}
	return sum
}

// matmulQ8 is matmul for a Q8_0 matrix.
func matmulQ8(threads int, sc *scratch, out []float32, m *Matrix, x []float32, batch int) {
	rows, cols := m.Rows, m.Cols
	nb := cols / qk
	for w := 0; w < threads; w++ {
		sc.get(w, cols+nb)
	}
	grain := max(1, 16384/(cols*batch))
	parallelFor(threads, rows, grain, func(w, lo, hi int) {
		buf := sc.bufs[w][:cols+nb]
		qf, d := buf[:cols], buf[cols:]
		for r := lo; r < hi; r++ {
			raw := m.raw[r*m.rowBytes : (r+1)*m.rowBytes]
			if batch == 1 {
				out[r] = dotQ8Raw(raw, x)
				continue
			}
			unpackQ8(raw, qf, d)
			for b := 0; b < batch; b++ {
				out[b*rows+r] = dotQ8(qf, d, x[b*cols:(b+1)*cols])
			}
		}
	})
}

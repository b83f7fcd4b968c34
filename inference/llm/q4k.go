package llm

import "github.com/tenzrod/tenzrod/inference/gguf"

// Q4_K rows run on the Q8_0 kernels. A Q4_K weight is scale*q - min per
// sub-block of 32 (q in 0..15), so a row's product with x is the Q8_0
// product of the quants under the sub-block scales, less the sum over
// sub-blocks of min times the sub-block's sum of x. The quants are kept one
// int8 a weight like Q8_0's (1.25 bytes a weight with scales and mins, not
// the 4 of float32), the first term is a Q8_0 kernel's (the same bits on
// every kernel set) and the second is computed here, in one fixed order.

// unpackQ4K splits encoded Q4_K rows into quants, sub-block scales and
// sub-block mins.
func unpackQ4K(raw []byte, q []int8, d, mins []float32) {
	var qb [gguf.KBlockSize]uint8
	var sc, mn [8]float32
	bb := len(raw) / (len(q) / gguf.KBlockSize)
	for b := 0; b < len(q)/gguf.KBlockSize; b++ {
		gguf.UnpackQ4K(raw[b*bb:], &qb, &sc, &mn)
		for i, v := range qb {
			q[b*gguf.KBlockSize+i] = int8(v)
		}
		copy(d[8*b:], sc[:])
		copy(mins[8*b:], mn[:])
	}
}

// blockSums returns, for each of batch rows of x (cols long), the float32
// sum of each run of 32 values, summed in order.
func blockSums(x []float32, cols, batch int) []float32 {
	nb := cols / qk
	out := make([]float32, batch*nb)
	for i := range out {
		var s float32
		for _, v := range x[i*qk : (i+1)*qk] {
			s += v
		}
		out[i] = s
	}
	return out
}

// minTerm is the sum over sub-blocks of mins[i]*sums[i], in order.
func minTerm(mins, sums []float32) float32 {
	var s float32
	sums = sums[:len(mins)]
	for i, m := range mins {
		s += float32(m * sums[i])
	}
	return s
}

// dotQ4K is the product of a Q4_K row (quants q, scales d, mins) and x:
// the reference the matrix products reproduce bit for bit.
func dotQ4K(q []int8, d, mins, x []float32) float32 {
	return dotQ8(q, d, x) - minTerm(mins, blockSums(x, len(x), 1))
}

func (m *Matrix) q4Mins(r int) []float32 {
	nb := m.Cols / qk
	return m.q4min[r*nb : (r+1)*nb : (r+1)*nb]
}

package gguf

import (
	"encoding/binary"
	"math"
)

// K-quants (ggml's QK_K super-blocks of 256 weights) and BF16, the types
// of most GGUFs people download. Decoding follows ggml's
// dequantize_row_q4_K / _q6_K with every product rounded to float32 on its
// own, so a row decodes to the same bits on every machine.

// KBlockSize is the number of weights in one Q4_K or Q6_K super-block.
const KBlockSize = 256

const (
	// Q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit sub-block scales and
	// mins, 128 bytes of 4-bit quants.
	q4KBlockBytes = 2 + 2 + 12 + KBlockSize/2
	// Q6_K: 128 bytes of low 4 bits, 64 of high 2 bits, 16 int8 scales,
	// fp16 d.
	q6KBlockBytes = KBlockSize/2 + KBlockSize/4 + KBlockSize/16 + 2
)

// q4KScaleMin unpacks the 6-bit scale and min of sub-block j (0..7).
func q4KScaleMin(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xf | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// UnpackQ4K splits one Q4_K block into its 256 quants (0..15, in weight
// order) and, per sub-block of 32, the scale and min a weight is
// scale*q - min of; decoding a weight is exactly that expression.
func UnpackQ4K(blk []byte, q *[KBlockSize]uint8, scale, minv *[8]float32) {
	blk = blk[:q4KBlockBytes]
	d := f16Table[binary.LittleEndian.Uint16(blk)]
	dmin := f16Table[binary.LittleEndian.Uint16(blk[2:])]
	scales, qs := blk[4:16], blk[16:]
	for s := range 8 {
		sc, m := q4KScaleMin(s, scales)
		scale[s], minv[s] = float32(d*float32(sc)), float32(dmin*float32(m))
	}
	for j := range 4 { // 64 weights: low nibbles, then high
		for l, b := range qs[32*j : 32*j+32] {
			q[64*j+l], q[64*j+32+l] = b&0xf, b>>4
		}
	}
}

func decodeQ4K(dst []float32, src []byte) {
	var q [KBlockSize]uint8
	var scale, minv [8]float32
	for b := 0; b < len(dst)/KBlockSize; b++ {
		UnpackQ4K(src[b*q4KBlockBytes:], &q, &scale, &minv)
		out := dst[b*KBlockSize:][:KBlockSize]
		for i, v := range q {
			out[i] = float32(scale[i/32]*float32(v)) - minv[i/32]
		}
	}
}

func decodeQ6K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/KBlockSize; b++ {
		blk := src[b*q6KBlockBytes:][:q6KBlockBytes]
		ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
		d := f16Table[binary.LittleEndian.Uint16(blk[208:])]
		out := dst[b*KBlockSize:][:KBlockSize]
		for h := 0; h < 2; h++ { // 128 weights per half
			l0, h0, s0, o := ql[64*h:], qh[32*h:], sc[8*h:], out[128*h:]
			for l := range 32 {
				is := l / 16
				q1 := int8(l0[l]&0xf|(h0[l]>>0&3)<<4) - 32
				q2 := int8(l0[l+32]&0xf|(h0[l]>>2&3)<<4) - 32
				q3 := int8(l0[l]>>4|(h0[l]>>4&3)<<4) - 32
				q4 := int8(l0[l+32]>>4|(h0[l]>>6&3)<<4) - 32
				o[l] = float32(d*float32(int8(s0[is]))) * float32(q1)
				o[l+32] = float32(d*float32(int8(s0[is+2]))) * float32(q2)
				o[l+64] = float32(d*float32(int8(s0[is+4]))) * float32(q3)
				o[l+96] = float32(d*float32(int8(s0[is+6]))) * float32(q4)
			}
		}
	}
}

// appendQ4KBlock quantises 256 weights: per sub-block of 32 a scale and a
// min from its range, both stored as 6-bit multiples of the super-block's
// d and dmin. It is simpler than ggml's iterative search (the files it
// writes are for tests and the devnet) but its output is a valid Q4_K
// block any reader decodes alike.
func appendQ4KBlock(dst []byte, x []float32) []byte {
	var scale, minv [8]float32
	var maxScale, maxMin float32
	for j := range 8 {
		lo, hi := float32(0), float32(0)
		for _, v := range x[32*j : 32*j+32] {
			lo, hi = min(lo, v), max(hi, v)
		}
		scale[j], minv[j] = (hi-lo)/15, -lo
		maxScale, maxMin = max(maxScale, scale[j]), max(maxMin, minv[j])
	}
	d := F16ToF32(F32ToF16(maxScale / 63))
	dmin := F16ToF32(F32ToF16(maxMin / 63))
	var sc, mn [8]uint8
	for j := range 8 {
		if d > 0 {
			sc[j] = uint8(min(63, math.Round(float64(scale[j]/d))))
		}
		if dmin > 0 {
			mn[j] = uint8(min(63, math.Round(float64(minv[j]/dmin))))
		}
	}
	var packed [12]byte
	for j := range 4 {
		packed[j] = sc[j] | (sc[j+4]>>4)<<6
		packed[j+4] = mn[j] | (mn[j+4]>>4)<<6
		packed[j+8] = sc[j+4]&0xf | (mn[j+4]&0xf)<<4
	}
	dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
	dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(dmin))
	dst = append(dst, packed[:]...)
	var q [KBlockSize]uint8
	for j := range 8 {
		step, off := d*float32(sc[j]), dmin*float32(mn[j])
		for l, v := range x[32*j : 32*j+32] {
			if step > 0 {
				q[32*j+l] = uint8(max(0, min(15, math.Round(float64((v+off)/step)))))
			}
		}
	}
	for j := range 4 {
		for l := range 32 {
			dst = append(dst, q[64*j+l]|q[64*j+32+l]<<4)
		}
	}
	return dst
}

// appendQ6KBlock quantises 256 weights: an int8 scale per 16 (a multiple
// of the block's d) and 6-bit quants centred on 32.
func appendQ6KBlock(dst []byte, x []float32) []byte {
	var scale [16]float32
	var amax float32
	for j := range 16 {
		for _, v := range x[16*j : 16*j+16] {
			scale[j] = max(scale[j], float32(math.Abs(float64(v)))/31)
		}
		amax = max(amax, scale[j])
	}
	d := F16ToF32(F32ToF16(amax / 127))
	var sc [16]int8
	var q [KBlockSize]uint8
	for j := range 16 {
		if d > 0 {
			sc[j] = int8(min(127, math.Round(float64(scale[j]/d))))
		}
		step := d * float32(sc[j])
		for l, v := range x[16*j : 16*j+16] {
			q[16*j+l] = 32
			if step > 0 {
				q[16*j+l] = uint8(max(-32, min(31, math.Round(float64(v/step)))) + 32)
			}
		}
	}
	var ql [128]byte
	var qh [64]byte
	for h := range 2 {
		for l := range 32 {
			q1, q2, q3, q4 := q[128*h+l], q[128*h+l+32], q[128*h+l+64], q[128*h+l+96]
			ql[64*h+l] = q1&0xf | (q3&0xf)<<4
			ql[64*h+l+32] = q2&0xf | (q4&0xf)<<4
			qh[32*h+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
	dst = append(dst, ql[:]...)
	dst = append(dst, qh[:]...)
	for _, s := range sc {
		dst = append(dst, byte(s))
	}
	return binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
}

// bf16 conversions: BF16 is the top half of a float32, rounded to nearest
// even on the way down (NaNs kept quiet).
func f32ToBF16(v float32) uint16 {
	b := math.Float32bits(v)
	if v != v {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

package gguf

import "math"

// f16Table maps every IEEE 754 half-precision bit pattern to its float32 value.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = f16ToF32Slow(uint16(h))
	}
	return &t
}()

func f16ToF32Slow(h uint16) float32 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return float32(sign * math.Ldexp(mant, -24))
	case 0x1f:
		if mant != 0 {
			return float32(math.NaN())
		}
		return float32(sign * math.Inf(1))
	}
	return float32(sign * math.Ldexp(1024+mant, exp-25))
}

// F16ToF32 converts IEEE 754 half-precision bits to a float32 (exactly).
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToF16 converts a float32 to IEEE 754 half-precision bits, rounding to
// nearest even; values beyond the half range become ±Inf.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half: value = M * 2^(exp-150), unit 2^-24.
		m := mant | 0x800000
		shift := uint32(126 - exp)
		if shift >= 25 {
			return sign
		}
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is the correct rounding, up to Inf
	}
	return sign | uint16(h)
}

package llm

import "math"

// Portable elementary functions. The standard library's Exp and Log use
// assembly on some architectures (with FMA when the CPU has it) and its Go
// code may be compiled with fused multiply-adds elsewhere, so their last bit
// can differ between machines. These ports of the same algorithms round every
// product explicitly (float64(...) forbids fusion), so every machine computes
// the same bits: a requirement for continuing a generation on another
// provider and for checking commitments.

// r64 is the identity; wrapping a product in it forbids fusing it into an FMA.
func r64(x float64) float64 { return float64(x) }

// expDet's constants; the vector kernels use them too.
const (
	expLn2Hi     = 6.93147180369123816490e-01
	expLn2Lo     = 1.90821492927058770002e-10
	expLog2e     = 1.44269504088896338700e+00
	expOverflow  = 7.09782712893383973096e+02
	expUnderflow = -7.45133219101941108420e+02
	expNearZero  = 1.0 / (1 << 28)
	expP1        = 1.66666666666666657415e-01
	expP2        = -2.77777777770155933842e-03
	expP3        = 6.61375632143793436117e-05
	expP4        = -1.65339022054652515390e-06
	expP5        = 4.13813679705723846039e-08
	// expMainMax bounds |x| for which expDet takes neither a special case
	// nor math.Ldexp (|k| < 1000): the range the vector kernels compute.
	expMainMax = 690
)

// expDet returns e**x.
func expDet(x float64) float64 {
	const (
		ln2Hi     = expLn2Hi
		ln2Lo     = expLn2Lo
		log2e     = expLog2e
		overflow  = expOverflow
		underflow = expUnderflow
		nearZero  = expNearZero
		p1        = expP1
		p2        = expP2
		p3        = expP3
		p4        = expP4
		p5        = expP5
	)
	switch {
	case x != x:
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	if x < 0 {
		k = int(r64(log2e*x) - 0.5)
	} else {
		k = int(r64(log2e*x) + 0.5)
	}
	hi := x - r64(float64(k)*ln2Hi)
	lo := r64(float64(k) * ln2Lo)
	r := hi - lo
	t := r64(r * r)
	c := r - r64(t*(p1+r64(t*(p2+r64(t*(p3+r64(t*(p4+r64(t*p5)))))))))
	y := 1 - ((lo - r64(r*c)/(2-c)) - hi)
	return scale2(y, k)
}

// scale2 returns y * 2**k. While the result and 2**k are normal numbers the
// product by 2**k is exact, so it equals math.Ldexp (which is slower).
func scale2(y float64, k int) float64 {
	if k > -1000 && k < 1000 {
		return y * math.Float64frombits(uint64(1023+k)<<52)
	}
	return math.Ldexp(y, k)
}

// logDet returns the natural logarithm of x.
func logDet(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	fr := f1 - 1
	k := float64(ki)
	s := fr / (2 + fr)
	s2 := r64(s * s)
	s4 := r64(s2 * s2)
	t1 := r64(s2 * (l1 + r64(s4*(l3+r64(s4*(l5+r64(s4*l7)))))))
	t2 := r64(s4 * (l2 + r64(s4*(l4+r64(s4*l6)))))
	r := t1 + t2
	hfsq := r64(r64(0.5*fr) * fr)
	return r64(k*ln2Hi) - ((hfsq - (r64(s*(hfsq+r)) + r64(k*ln2Lo))) - fr)
}

var sinCoef = [...]float64{
	1.58962301576546568060e-10,
	-2.50507477628578072866e-8,
	2.75573136213857245213e-6,
	-1.98412698295895385996e-4,
	8.33333333332211858878e-3,
	-1.66666666666666307295e-1,
}

var cosCoef = [...]float64{
	-1.13585365213876817300e-11,
	2.08757008419747316778e-9,
	-2.75573141792967388112e-7,
	2.48015872888517045348e-5,
	-1.38888888888730564116e-3,
	4.16666666666665929218e-2,
}

// sincosDet returns sin(x), cos(x) for 0 <= x < 2^29 (Cody-Waite reduction).
func sincosDet(x float64) (sin, cos float64) {
	const (
		pi4a = 7.85398125648498535156e-1
		pi4b = 3.77489470793079817668e-8
		pi4c = 2.69515142907905952645e-15
	)
	j := uint64(r64(x * (4 / math.Pi)))
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	z := ((x - r64(y*pi4a)) - r64(y*pi4b)) - r64(y*pi4c)
	cosSign, sinSign := false, false
	if j > 3 {
		j -= 4
		sinSign, cosSign = !sinSign, !cosSign
	}
	if j > 1 {
		cosSign = !cosSign
	}
	zz := r64(z * z)
	s := sinCoef
	c := cosCoef
	sp := z + r64(r64(z*zz)*(r64((r64((r64((r64((r64(s[0]*zz)+s[1])*zz)+s[2])*zz)+s[3])*zz)+s[4])*zz)+s[5]))
	cp := 1.0 - r64(0.5*zz) + r64(r64(zz*zz)*(r64((r64((r64((r64((r64(c[0]*zz)+c[1])*zz)+c[2])*zz)+c[3])*zz)+c[4])*zz)+c[5]))
	if j == 1 || j == 2 {
		sin, cos = cp, sp
	} else {
		sin, cos = sp, cp
	}
	if cosSign {
		cos = -cos
	}
	if sinSign {
		sin = -sin
	}
	return sin, cos
}

package llm

import "math"

// archExp is the vector expDet (see expInPlace).
func archExp(x []float64) { expDetAVX2(x) }

// expConsts is the constant table of expDet4Asm (exp_amd64.s).
var expConsts = [16]float64{
	expLog2e, expLn2Hi, expLn2Lo, expP1, expP2, expP3, expP4, expP5,
	math.Float64frombits(1 << 63), 0.5, 2, 1, math.Float64frombits(1023),
}

//go:noescape
func expDet4Asm(dst, src *float64, n int, c *[16]float64)

// expDetAVX2 runs expDet4Asm over chunks of x, then recomputes with the
// scalar expDet the lanes outside the main path and the tail.
func expDetAVX2(x []float64) {
	var src [64]float64
	for len(x) > 0 {
		n := copy(src[:], x)
		n4 := n &^ 3
		if n4 > 0 {
			expDet4Asm(&x[0], &src[0], n4, &expConsts)
		}
		for i, v := range src[:n] {
			if a := math.Abs(v); i >= n4 || !(a >= expNearZero && a <= expMainMax) {
				x[i] = expDet(v)
			}
		}
		x = x[n:]
	}
}

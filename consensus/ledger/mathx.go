package ledger

import "math/bits"

// add returns a+b or a CodeOverflow rejection.
func add(a, b uint64, what string) (uint64, error) {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return 0, reject(CodeOverflow, "%s: %d + %d overflows", what, a, b)
	}
	return s, nil
}

// sub returns a-b or a CodeOverdraft rejection.
func sub(a, b uint64, what string) (uint64, error) {
	if b > a {
		return 0, reject(CodeOverdraft, "%s: %d available, %d needed", what, a, b)
	}
	return a - b, nil
}

// mulDiv returns a*b/c with a 128-bit intermediate; c must be non-zero and
// the quotient must fit (it does whenever b <= c).
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// mulGT reports whether a*x > b*y for non-negative a, b and small x, y,
// without overflow.
func mulGT(a int64, x uint64, b int64, y uint64) bool {
	ah, al := bits.Mul64(uint64(a), x)
	bh, bl := bits.Mul64(uint64(b), y)
	return ah > bh || (ah == bh && al > bl)
}

package ledger

import (
	"encoding/binary"
	"math"
	"math/bits"
)

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
	ah, al := bits.Mul64(nonNeg(a), x)
	bh, bl := bits.Mul64(nonNeg(b), y)
	return ah > bh || (ah == bh && al > bl)
}

// The conversions below make the bounds the ledger relies on explicit:
// heights, times and powers are non-negative by construction, and the
// block counts added to them are governed parameters (Params.Validate) or
// payload fields with a limit. A value out of those bounds saturates
// instead of wrapping, so no deadline comes before its start and no key
// sorts a height out of place.

// nonNeg is x as an unsigned number, 0 for a negative x.
func nonNeg(x int64) uint64 {
	if x < 0 {
		return 0
	}
	return uint64(x)
}

// after is h + n blocks (or seconds), math.MaxInt64 when that overflows: a
// deadline so far away is never reached.
func after(h int64, n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	s := h + int64(n)
	if s < h {
		return math.MaxInt64
	}
	return s
}

// powerOf is a stake's voting power, whole PowerUnits.
func powerOf(stake uint64) int64 {
	q := stake / PowerUnit
	if q > math.MaxInt64 {
		return math.MaxInt64 // unreachable while PowerUnit > 1
	}
	return int64(q)
}

// heightOf reads a height this store wrote as 8 big-endian bytes.
func heightOf(b []byte) (int64, bool) {
	u := binary.BigEndian.Uint64(b)
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

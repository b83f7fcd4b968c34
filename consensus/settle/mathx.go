package settle

import (
	"errors"
	"math/bits"
)

// ErrOverflow is a sum of micro-units that would not fit in 64 bits.
var ErrOverflow = errors.New("settle: amount overflows 64 bits")

// addU returns a+b or ErrOverflow.
func addU(a, b uint64) (uint64, error) {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return 0, ErrOverflow
	}
	return s, nil
}

// subU returns a-b; b > a breaks the invariant that every sum is built
// from the amounts later taken out of it.
func subU(a, b uint64) uint64 {
	if b > a {
		panic("settle: sum fell below zero: an amount was removed that was never added")
	}
	return a - b
}

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

// tally counts price into (add) or out of the two sums of pending prices
// a record is part of, a at ka and b at kb, dropping a sum that falls to
// 0. An addition that would overflow either sum changes neither. It
// returns b's sum at kb, the one a gauge shows.
func tally[A, B comparable](a map[A]uint64, ka A, b map[B]uint64, kb B, price uint64, add bool) (uint64, error) {
	if add {
		x, err := addU(a[ka], price)
		if err != nil {
			return b[kb], err
		}
		y, err := addU(b[kb], price)
		if err != nil {
			return b[kb], err
		}
		a[ka], b[kb] = x, y
		return y, nil
	}
	a[ka], b[kb] = subU(a[ka], price), subU(b[kb], price)
	shown := b[kb]
	if a[ka] == 0 {
		delete(a, ka)
	}
	if shown == 0 {
		delete(b, kb)
	}
	return shown, nil
}

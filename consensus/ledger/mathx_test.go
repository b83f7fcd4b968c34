package ledger

import (
	"math"
	"testing"
)

// TestBoundedConversions: deadlines saturate instead of wrapping before
// their start, negative heights sort first instead of last, and a stored
// height past the largest int64 is refused.
func TestBoundedConversions(t *testing.T) {
	for _, c := range []struct {
		h    int64
		n    uint64
		want int64
	}{
		{100, 600, 700},
		{0, 0, 0},
		{math.MaxInt64 - 5, 5, math.MaxInt64},
		{math.MaxInt64 - 5, 6, math.MaxInt64},
		{1, math.MaxUint64, math.MaxInt64},
		{1, 1 << 63, math.MaxInt64},
		{-10, 4, -6},
	} {
		if got := after(c.h, c.n); got != c.want || got < c.h {
			t.Errorf("after(%d, %d) = %d, want %d", c.h, c.n, got, c.want)
		}
	}
	if nonNeg(-1) != 0 || nonNeg(0) != 0 || nonNeg(math.MaxInt64) != math.MaxInt64 {
		t.Error("nonNeg does not clamp at 0 or keeps no large value")
	}
	// The key order of heights is their numeric order, a negative one
	// (a range query's bound) first.
	if string(u64(nonNeg(-1))) >= string(u64(nonNeg(1))) {
		t.Error("a negative height sorts after a positive one")
	}
	if powerOf(math.MaxUint64) != math.MaxUint64/PowerUnit || powerOf(PowerUnit-1) != 0 {
		t.Error("powerOf is not whole PowerUnits")
	}
	if h, ok := heightOf(u64(42)); !ok || h != 42 {
		t.Errorf("heightOf(42) = %d, %v", h, ok)
	}
	if _, ok := heightOf(u64(1 << 63)); ok {
		t.Error("a height past MaxInt64 was read")
	}
}

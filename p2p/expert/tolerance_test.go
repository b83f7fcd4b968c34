package expert

import (
	"math"
	"testing"
)

// TestDeviation: rounding stays within Tolerance; a real change, a value
// that is not finite, or another shape is beyond it.
func TestDeviation(t *testing.T) {
	want := [][]float32{{1, -2, 0}, {0.5, 3, 1e-9}}
	clone := func() [][]float32 {
		return [][]float32{append([]float32(nil), want[0]...), append([]float32(nil), want[1]...)}
	}
	round := clone()
	round[1][1] = math.Nextafter32(3, 4)
	moved := clone()
	moved[0][2] = 0.01
	nan := clone()
	nan[1][0] = float32(math.NaN())
	for _, tc := range []struct {
		name    string
		claimed [][]float32
		beyond  bool
		at      int
	}{
		{"identical", clone(), false, 0},
		{"rounding", round, false, 4},
		{"moved", moved, true, 2},
		{"NaN", nan, true, 3},
		{"a row short", clone()[:1], true, 0},
	} {
		worst, at := Deviation(tc.claimed, want)
		if (worst > Tolerance) != tc.beyond || (tc.beyond || worst > 0) && at != tc.at {
			t.Errorf("%s: deviation %g at %d; want beyond %v at %d", tc.name, worst, at, tc.beyond, tc.at)
		}
	}
}

package quantile

import (
	"errors"
	"fmt"
	"math"
)

// DefaultWarmup is the number of observations kept and answered exactly
// before the five P² markers take over.
const DefaultWarmup = 20

// ErrInvalid reports a bad constructor argument.
var ErrInvalid = errors.New("p2: invalid argument")

// Estimator estimates one quantile of a stream in constant space with the
// P² algorithm. It is not safe for concurrent use; see Tracker.
type Estimator struct {
	p      float64
	warmup int
	n      int

	buf []float64 // the first observations, sorted, while n <= warmup; then nil

	q    [5]float64 // marker heights
	pos  [5]float64 // actual marker positions (1-based, whole numbers)
	frac [5]float64 // desired position of marker i is 1 + (n-1)*frac[i]
}

// NewWithWarmup returns an estimator of the p-quantile that answers exactly
// from a sorted buffer of the first warmup observations (warmup >= 5) and
// initialises its markers from that sample. warmup = 5 is the original
// algorithm of Jain and Chlamtac.
func NewWithWarmup(p float64, warmup int) (*Estimator, error) {
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("%w: quantile %v not in (0, 1)", ErrInvalid, p)
	}
	if warmup < 5 || warmup > 1<<16 {
		return nil, fmt.Errorf("%w: warm-up %d not in [5, 65536]", ErrInvalid, warmup)
	}
	e := &Estimator{p: p, warmup: warmup, buf: make([]float64, 0, warmup)}
	e.frac = [5]float64{0, p / 2, p, (1 + p) / 2, 1}
	return e, nil
}

// P returns the quantile the estimator tracks.
func (e *Estimator) P() float64 { return e.p }

// Count returns the number of observations added (non-finite values are
// not counted).
func (e *Estimator) Count() int { return e.n }

// Reset forgets every observation.
func (e *Estimator) Reset() {
	e.n = 0
	e.buf = make([]float64, 0, e.warmup)
	e.q, e.pos = [5]float64{}, [5]float64{}
}

// Add records one observation. NaN and ±Inf are ignored: one of them would
// poison every later estimate.
func (e *Estimator) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	e.n++
	if e.buf != nil && len(e.buf) == e.warmup {
		e.initMarkers()
	}
	if e.buf != nil {
		i := len(e.buf)
		e.buf = append(e.buf, x)
		for i > 0 && e.buf[i-1] > x { // insertion sort keeps buf ordered
			e.buf[i] = e.buf[i-1]
			i--
		}
		e.buf[i] = x
		return
	}
	e.step(x)
}

// Quantile returns the current estimate: the exact sample quantile
// (linear interpolation between order statistics, Hyndman-Fan type 7)
// during the warm-up, the middle marker after it, and NaN before the first
// observation.
func (e *Estimator) Quantile() float64 {
	switch {
	case e.n == 0:
		return math.NaN()
	case e.buf != nil:
		return exact(e.buf, e.p)
	default:
		return e.q[2]
	}
}

// exact returns the type-7 p-quantile of the sorted sample s.
func exact(s []float64, p float64) float64 {
	h := float64(len(s)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// initMarkers places the five markers on the full sorted warm-up sample
// when observation warmup+1 arrives: the
// extremes at its ends and the inner three at the order statistics nearest
// their desired positions, kept strictly increasing. With warmup = 5 this
// is the paper's initialisation (markers at ranks 1..5).
func (e *Estimator) initMarkers() {
	b := len(e.buf)
	e.pos[0], e.pos[4] = 1, float64(b)
	for i := 1; i <= 3; i++ {
		want := math.Round(1 + float64(b-1)*e.frac[i])
		lo, hi := e.pos[i-1]+1, float64(b-(4-i))
		e.pos[i] = math.Min(math.Max(want, lo), hi)
	}
	for i := range e.q {
		e.q[i] = e.buf[int(e.pos[i])-1]
	}
	e.buf = nil
}

// step is one P² update for observation x; e.n already counts x.
func (e *Estimator) step(x float64) {
	var k int
	switch {
	case x < e.q[0]:
		e.q[0], k = x, 0
	case x >= e.q[4]:
		e.q[4], k = x, 3
	default:
		for k = 0; k < 3 && x >= e.q[k+1]; k++ {
		}
	}
	for i := k + 1; i < 5; i++ {
		e.pos[i]++
	}
	n1 := float64(e.n - 1)
	for i := 1; i <= 3; i++ {
		d := 1 + n1*e.frac[i] - e.pos[i]
		if (d >= 1 && e.pos[i+1]-e.pos[i] > 1) || (d <= -1 && e.pos[i-1]-e.pos[i] < -1) {
			s := math.Copysign(1, d)
			qp := e.parabolic(i, s)
			if e.q[i-1] < qp && qp < e.q[i+1] {
				e.q[i] = qp
			} else {
				e.q[i] = e.linear(i, s)
			}
			e.pos[i] += s
		}
	}
}

// parabolic is the piecewise-parabolic (P²) prediction for moving marker
// i by s (±1).
func (e *Estimator) parabolic(i int, s float64) float64 {
	q, n := &e.q, &e.pos
	return q[i] + s/(n[i+1]-n[i-1])*
		((n[i]-n[i-1]+s)*(q[i+1]-q[i])/(n[i+1]-n[i])+
			(n[i+1]-n[i]-s)*(q[i]-q[i-1])/(n[i]-n[i-1]))
}

// linear is the fallback prediction towards neighbour i+s, used when the
// parabola would leave the interval between the neighbouring markers.
func (e *Estimator) linear(i int, s float64) float64 {
	j := i + int(s)
	return e.q[i] + s*(e.q[j]-e.q[i])/(e.pos[j]-e.pos[i])
}

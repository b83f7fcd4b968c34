package commit

import (
	"fmt"
	"math"
	"sort"

	"github.com/tenzrod/tenzrod/inference"
)

// Tolerance bounds how far a recomputation may drift from a chunk proof and
// still pass. Counts and differences are per chunk, over the verifier's own
// top-k pairs; mantissa differences are in half-precision units (1/1024 of
// the value's binade) and only count pairs whose exponents agree.
type Tolerance struct {
	MaxExpMismatch    int
	MaxMeanMantissa   float64
	MaxMedianMantissa float64
}

// DefaultTolerance is calibrated by TestDetectionExperiment: honest
// recomputation (other thread counts, prefill batch shapes, and a float64
// reference implementation of the same weights) never exceeds a few
// mismatching pairs per chunk and a mean mantissa difference well below one
// unit, while other weights, Q8_0 served for F32 and a changed prompt show
// dozens of exponent mismatches per chunk and mean mantissa differences of
// tens of units. The bounds sit between the two, nearer the honest side.
var DefaultTolerance = Tolerance{MaxExpMismatch: 8, MaxMeanMantissa: 4, MaxMedianMantissa: 2}

// ChunkReport is the verdict on one chunk.
type ChunkReport struct {
	Chunk          int
	Steps          int
	Pairs          int
	ExpMismatch    int
	MeanMantissa   float64
	MedianMantissa float64
	OK             bool
}

// Report is the verdict on a whole generation.
type Report struct {
	Chunks []ChunkReport
	Failed int // chunks that failed
	OK     bool
}

// Verify compares chunk proofs with recomputed top-k log-probs, one entry
// per decode step (as Engine.Score returns them with k = TopK).
func Verify(proofs []Proof, recomputed [][]inference.LogProb, vocab int, tol Tolerance) (Report, error) {
	steps := 0
	for i, p := range proofs {
		if len(p.Coeffs) == 0 || len(p.Coeffs)%TopK != 0 || p.Steps() > StepsPerChunk {
			return Report{}, fmt.Errorf("commit: proof %d has %d coefficients", i, len(p.Coeffs))
		}
		if i+1 < len(proofs) && p.Steps() != StepsPerChunk {
			return Report{}, fmt.Errorf("commit: proof %d covers %d steps but is not the last", i, p.Steps())
		}
		steps += p.Steps()
	}
	if steps != len(recomputed) {
		return Report{}, fmt.Errorf("commit: proofs cover %d steps, recomputation has %d", steps, len(recomputed))
	}
	rep := Report{OK: true}
	for c, p := range proofs {
		cr := ChunkReport{Chunk: c, Steps: p.Steps()}
		var diffs []float64
		for s := 0; s < p.Steps(); s++ {
			top := recomputed[c*StepsPerChunk+s]
			for _, lp := range top[:min(TopK, len(top))] {
				cr.Pairs++
				if lp.ID < 0 || lp.ID >= vocab {
					cr.ExpMismatch++
					continue
				}
				y := evaluate(p.Coeffs, uint32(Key(s, lp.ID, vocab)%uint64(p.Modulus)))
				if y > 0x7bff {
					cr.ExpMismatch++ // not a committed value at all
					continue
				}
				ce, cm := f16Parts(uint16(y))
				ve, vm := f16Parts(Value(lp.LogProb))
				if ce != ve {
					cr.ExpMismatch++
					continue
				}
				diffs = append(diffs, math.Abs(float64(cm-vm)))
			}
		}
		cr.MeanMantissa, cr.MedianMantissa = meanMedian(diffs)
		cr.OK = cr.Pairs == TopK*cr.Steps && cr.ExpMismatch <= tol.MaxExpMismatch &&
			cr.MeanMantissa <= tol.MaxMeanMantissa && cr.MedianMantissa <= tol.MaxMedianMantissa
		if !cr.OK {
			rep.Failed++
			rep.OK = false
		}
		rep.Chunks = append(rep.Chunks, cr)
	}
	return rep, nil
}

func meanMedian(d []float64) (mean, median float64) {
	if len(d) == 0 {
		return math.Inf(1), math.Inf(1)
	}
	var sum float64
	for _, v := range d {
		sum += v
	}
	sort.Float64s(d)
	median = d[len(d)/2]
	if len(d)%2 == 0 {
		median = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return sum / float64(len(d)), median
}

package llm

import (
	"fmt"
	"math"
	"sort"

	"github.com/tenzrod/tenzrod/inference"
)

// MaxLogProbs bounds the top-k log-probs a caller may ask for per position.
const MaxLogProbs = 64

// TopLogProbs returns the k most likely tokens of logits with their
// log-probs (log softmax of the raw logits), most likely first, lower ID
// first on ties.
func TopLogProbs(logits []float32, k int) []inference.LogProb {
	k = min(k, len(logits))
	if k <= 0 {
		return nil
	}
	lse := logSumExp(logits)
	top := make([]int, 0, k+1)
	for i, v := range logits {
		if len(top) == k && v <= logits[top[k-1]] {
			continue
		}
		j := len(top)
		top = append(top, i)
		for j > 0 && logits[top[j-1]] < v {
			top[j] = top[j-1]
			j--
		}
		top[j] = i
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]inference.LogProb, len(top))
	for i, id := range top {
		out[i] = inference.LogProb{ID: id, LogProb: float32(float64(logits[id]) - lse)}
	}
	return out
}

// TokenLogProb is the log-probability of token id under logits.
func TokenLogProb(logits []float32, id int) float32 {
	return float32(float64(logits[id]) - logSumExp(logits))
}

// logSumExp is log Σ exp(logits), shifted by the maximum for range, with
// the engine's deterministic exp and log.
func logSumExp(logits []float32) float64 {
	m := logits[0]
	for _, v := range logits {
		m = max(m, v)
	}
	var sum float64
	var e [expChunk]float64
	for c := 0; c < len(logits); c += expChunk {
		ec := e[:min(expChunk, len(logits)-c)]
		for i := range ec {
			ec[i] = float64(logits[c+i] - m)
		}
		expInPlace(ec)
		for _, v := range ec {
			sum += v
		}
	}
	return float64(m) + logDet(sum)
}

// checkSampling validates sampling parameters.
func checkSampling(sp inference.Sampling) error {
	switch {
	case math.IsNaN(sp.Temperature) || sp.Temperature < 0 || sp.Temperature > 100:
		return fmt.Errorf("llm: temperature %v outside [0, 100]", sp.Temperature)
	case math.IsNaN(sp.TopP) || sp.TopP < 0:
		return fmt.Errorf("llm: top_p %v is negative", sp.TopP)
	case sp.TopK < 0:
		return fmt.Errorf("llm: top_k %d is negative", sp.TopK)
	case sp.MaxTokens < 0:
		return fmt.Errorf("llm: max_tokens %d is negative", sp.MaxTokens)
	case len(sp.Stop) > 16:
		return fmt.Errorf("llm: %d stop sequences (at most 16)", len(sp.Stop))
	}
	for _, s := range sp.Stop {
		if s == "" || len(s) > 256 {
			return fmt.Errorf("llm: stop sequence of %d bytes (want 1..256)", len(s))
		}
	}
	return nil
}

// Sample picks the token at absolute position pos. Temperature 0 is greedy.
// Otherwise the candidates (all tokens in ID order, or, when top_k or top_p
// applies, the most likely ones sorted by logit then ID) are weighted by
// exp((logit-max)/T) and one is drawn by inverse CDF with a uniform number
// derived from (seed, pos) alone.
func Sample(logits []float32, sp inference.Sampling, pos int) int {
	id, _ := sampleNear(logits, sp, pos, -1)
	return id
}

// nearSlack bounds the float rounding sampleNear forgives: a relative
// 1e-6, far above what another kernel or thread count changes in a logit
// (they agree bit for bit today) and far below what another seed,
// another token or other weights move.
const nearSlack = 1e-6

// sampleNear is Sample that also reports, for want ≥ 0, whether want lies
// within nearSlack of the draw.
func sampleNear(logits []float32, sp inference.Sampling, pos, want int) (int, bool) {
	if sp.Temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		top := float64(logits[best])
		near := want >= 0 && want < len(logits) && top-float64(logits[want]) <= nearSlack*(1+math.Abs(top))
		return best, near
	}
	cand := make([]int, len(logits))
	for i := range cand {
		cand[i] = i
	}
	filter := (sp.TopK > 0 && sp.TopK < len(logits)) || (sp.TopP > 0 && sp.TopP < 1)
	if filter {
		sort.SliceStable(cand, func(a, b int) bool { return logits[cand[a]] > logits[cand[b]] })
		if sp.TopK > 0 && sp.TopK < len(cand) {
			cand = cand[:sp.TopK]
		}
	}
	m := logits[cand[0]]
	for _, id := range cand {
		m = max(m, logits[id])
	}
	w := make([]float64, len(cand))
	var total float64
	for i, id := range cand {
		w[i] = float64(logits[id]-m) / sp.Temperature
	}
	expInPlace(w)
	for _, v := range w {
		total += v
	}
	if sp.TopP > 0 && sp.TopP < 1 {
		var cum float64
		for i := range w {
			cum += w[i]
			if cum >= sp.TopP*total {
				cand, w, total = cand[:i+1], w[:i+1], cum
				break
			}
		}
	}
	target := uniform(sp.Seed, pos) * total
	slack := nearSlack * total
	var cum float64
	drawn, near := -1, false
	for i, x := range w {
		if cand[i] == want && target >= cum-slack && target <= cum+x+slack {
			near = true
		}
		cum += x
		if drawn < 0 && cum > target {
			drawn = cand[i]
			if want < 0 {
				break
			}
		}
	}
	if drawn < 0 {
		drawn = cand[len(cand)-1]
	}
	return drawn, near
}

// uniform returns a number in [0, 1) determined by seed and position only.
func uniform(seed uint64, pos int) float64 {
	h := splitmix(seed ^ splitmix(uint64(pos)+0x632be59bd9b4e019))
	return float64(h>>11) / (1 << 53)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

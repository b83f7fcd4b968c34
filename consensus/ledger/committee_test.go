package ledger_test

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func candidates(powers ...int64) []ledger.Candidate {
	out := make([]ledger.Candidate, len(powers))
	for i, p := range powers {
		out[i] = ledger.Candidate{Validator: terms.AccountID(sha256.Sum256(fmt.Appendf(nil, "validator-%d", i))), Power: p}
	}
	return out
}

func seedOf(i int) terms.Hash32 { return sha256.Sum256(fmt.Appendf(nil, "block-%d", i)) }

// TestDrawCommitteeStakeWeighted: over 20000 seeds, a one-member draw
// picks each candidate in proportion to its power (chi-square below the
// 0.1% critical value for 4 degrees of freedom), a two-member draw
// without replacement includes each at its exact probability (within 5
// standard errors), members are always distinct, and a candidate without
// power is never drawn.
func TestDrawCommitteeStakeWeighted(t *testing.T) {
	const seeds = 20_000
	cs := candidates(1, 2, 3, 4, 10, 0)
	powers := []float64{1, 2, 3, 4, 10}
	total := 20.0
	one := make([]int, len(cs))
	two := make([]int, len(cs))
	idx := map[terms.AccountID]int{}
	for i, c := range cs {
		idx[c.Validator] = i
	}
	for s := range seeds {
		for _, m := range ledger.DrawCommittee(seedOf(s), 1, cs, 1) {
			one[idx[m.Validator]]++
		}
		got := ledger.DrawCommittee(seedOf(s), 1, cs, 2)
		if len(got) != 2 || got[0].Validator == got[1].Validator {
			t.Fatalf("seed %d: committee %+v, want 2 distinct members", s, got)
		}
		for _, m := range got {
			two[idx[m.Validator]]++
		}
	}
	if one[5] != 0 || two[5] != 0 {
		t.Fatalf("a candidate without power was drawn %d and %d times", one[5], two[5])
	}
	var chi2 float64
	for i, p := range powers {
		want := seeds * p / total
		chi2 += (float64(one[i]) - want) * (float64(one[i]) - want) / want
	}
	if chi2 > 18.47 {
		t.Fatalf("one-member draws %v for powers %v: chi-square %.1f over 18.47", one[:5], powers, chi2)
	}
	for i, pi := range powers {
		// P(i in two draws) = p_i + Σ_{j≠i} p_j × p_i / (1 − p_j).
		q := pi / total
		for j, pj := range powers {
			if j != i {
				q += (pj / total) * (pi / (total - pj))
			}
		}
		se := math.Sqrt(q * (1 - q) / seeds)
		if got := float64(two[i]) / seeds; math.Abs(got-q) > 5*se {
			t.Errorf("candidate of power %.0f in %.4f of two-member committees, want %.4f ± %.4f", pi, got, q, 5*se)
		}
	}
	t.Logf("one-member counts %v (chi-square %.2f), two-member inclusions %v", one[:5], chi2, two[:5])
}

// TestDrawCommitteeDeterministic: the draw depends only on the seed, the
// round and the candidate set (not its order), is capped at the number of
// candidates, and another seed or round draws differently.
func TestDrawCommitteeDeterministic(t *testing.T) {
	cs := candidates(5, 5, 5, 5, 5, 5, 5, 5)
	a := ledger.DrawCommittee(seedOf(1), 1, cs, 3)
	shuffled := append([]ledger.Candidate(nil), cs...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := ledger.DrawCommittee(seedOf(1), 1, shuffled, 3)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, same set: %v and %v", a, b)
	}
	if all := ledger.DrawCommittee(seedOf(1), 1, cs, 100); len(all) != len(cs) {
		t.Fatalf("k over the candidates drew %d of %d", len(all), len(cs))
	}
	differs := 0
	for s := 2; s < 12; s++ {
		if fmt.Sprint(ledger.DrawCommittee(seedOf(s), 1, cs, 3)) != fmt.Sprint(a) {
			differs++
		}
	}
	if differs < 8 || fmt.Sprint(ledger.DrawCommittee(seedOf(1), 2, cs, 3)) == fmt.Sprint(a) {
		t.Fatalf("other seeds or rounds rarely change the draw (%d of 10 differ)", differs)
	}
	if got := ledger.DrawCommittee(seedOf(1), 1, nil, 3); len(got) != 0 {
		t.Fatalf("no candidates drew %v", got)
	}
}

// TestCommitteeNeverTheAccused: the accused provider's operator is also
// the validator with most of the stake and holds the model; over 30
// disputes, each drawn from another block hash on a chain and its mirror
// node, it is never on a committee, while every other validator is.
func TestCommitteeNeverTheAccused(t *testing.T) {
	const disputes = 30
	p := disputeParams()
	p.DisputeWindowBlocks = 3 * disputes
	n := newDisputeNetWith(t, p, []int64{1000, 1, 2, 3, 4}, true)
	n.hash = func(h int64) terms.Hash32 { return sha256.Sum256(fmt.Appendf(nil, "accused-test-%d", h)) }
	n.declareAll()
	evs := make([]ledger.DisputeEvidence, disputes)
	for i := range evs {
		evs[i] = n.answer(t, i)
	}
	digests := n.settle(t, 100, evs...)
	seen := map[terms.AccountID]int{}
	accused := n.operator.Account()
	for i, d := range digests {
		id, tx := n.open(d, evs[i])
		n.block(tx)
		n.block()
		got := n.dispute(id)
		if got.Operator != accused || len(got.Current().Members) != 2 {
			t.Fatalf("dispute %d: %+v", i, got)
		}
		for _, m := range got.Current().Members {
			if m.Validator == accused {
				t.Fatalf("dispute %d: the accused operator %s sits on its committee %+v", i, accused, got.Current().Members)
			}
			seen[m.Validator]++
		}
	}
	if len(seen) != 4 {
		t.Fatalf("committees over %d disputes drew %v, want all 4 eligible validators", disputes, seen)
	}
}

// FuzzDrawCommittee: for any powers, seed, round and k, the committee has
// min(k, candidates with power) distinct members, none without power.
func FuzzDrawCommittee(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 9}, []byte("seed"), uint8(1), uint8(3))
	f.Add([]byte{0, 0}, []byte{}, uint8(2), uint8(5))
	f.Add([]byte{255, 1, 1, 1, 1, 1, 1, 1, 1}, []byte("x"), uint8(2), uint8(11))
	f.Fuzz(func(t *testing.T, powers, seed []byte, round, k uint8) {
		cs := make([]ledger.Candidate, len(powers))
		live := 0
		for i, p := range powers {
			cs[i] = ledger.Candidate{Validator: terms.AccountID(sha256.Sum256([]byte{byte(i), byte(i >> 8)})), Power: int64(p) - 8}
			if cs[i].Power > 0 {
				live++
			}
		}
		got := ledger.DrawCommittee(sha256.Sum256(seed), round, cs, int(k))
		if len(got) != min(int(k), live) {
			t.Fatalf("%d members from %d live candidates, k %d", len(got), live, k)
		}
		seen := map[terms.AccountID]bool{}
		for _, m := range got {
			if m.Power <= 0 || seen[m.Validator] {
				t.Fatalf("member %+v: without power or drawn twice (%+v)", m, got)
			}
			seen[m.Validator] = true
		}
	})
}

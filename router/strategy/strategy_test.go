package strategy

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

const ms = time.Millisecond

func cand(id string, price uint64, p95, mean time.Duration, standing uint32) Candidate {
	return Candidate{Peer: peer.ID(id), Price: price, P95: p95, Mean: mean, LatencyKnown: p95 > 0,
		Standing: standing, Capacity: 10, InFlight: 1, Up: true, BreakerReady: true}
}

func order(r Ranking) []string {
	out := make([]string, len(r.Order))
	for i, c := range r.Order {
		out[i] = string(c.Peer)
	}
	return out
}

func rank(t *testing.T, s *Selector, n Name, cs []Candidate, f Filter) []string {
	t.Helper()
	r, err := s.Rank(n, cs, f)
	if err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	return order(r)
}

func want(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: order %v, want %v", what, got, want)
	}
}

func newSel(t *testing.T, w Weights) *Selector {
	t.Helper()
	s, err := New(w, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var market = []Candidate{
	cand("cheap-slow", 100, 900*ms, 500*ms, 5000),
	cand("mid", 200, 200*ms, 120*ms, 9000),
	cand("fast-pricey", 400, 80*ms, 50*ms, 7000),
	cand("trusted", 300, 300*ms, 200*ms, 10_000),
}

func TestSingleSignalStrategies(t *testing.T) {
	s := newSel(t, testWeights)
	want(t, "price", rank(t, s, Price, market, Filter{}), "cheap-slow", "mid", "trusted", "fast-pricey")
	want(t, "latency", rank(t, s, Latency, market, Filter{}), "fast-pricey", "mid", "trusted", "cheap-slow")
	want(t, "standing", rank(t, s, Standing, market, Filter{}), "trusted", "mid", "fast-pricey", "cheap-slow")
}

// testWeights are the weights these tests' expected scores were worked out
// with; production's are DefaultWeights.
var testWeights = Weights{Price: 0.4, Latency: 0.3, Standing: 0.2, Load: 0.1}

func TestWeightedScores(t *testing.T) {
	s := newSel(t, testWeights)
	r, err := s.Rank(Weighted, market, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// mid: price 101/201, latency (65+1)/(160+1) ms, standing 0.9, load 0.9.
	wantMid := 0.4*101.0/201 + 0.3*66.0/161 + 0.2*0.9 + 0.1*0.9
	for _, c := range r.Order {
		if c.Peer == "mid" && math.Abs(c.Score-wantMid) > 1e-12 {
			t.Fatalf("mid score %v, want %v", c.Score, wantMid)
		}
		if c.Score < 0 || c.Score > 1 {
			t.Fatalf("score %v out of [0,1]", c.Score)
		}
	}
	// Scores: fast-pricey .631, cheap-slow .618, mid .594, trusted .503.
	want(t, "weighted default", order(r), "fast-pricey", "cheap-slow", "mid", "trusted")
	for i := 1; i < len(r.Order); i++ {
		if r.Order[i].Score > r.Order[i-1].Score {
			t.Fatalf("scores not descending: %v", r.Order)
		}
	}
	// A single non-zero weight reproduces that signal's strategy.
	want(t, "price-only", rank(t, newSel(t, Weights{Price: 1}), Weighted, market, Filter{}),
		"cheap-slow", "mid", "trusted", "fast-pricey")
	want(t, "latency-only", rank(t, newSel(t, Weights{Latency: 5}), Weighted, market, Filter{}),
		"fast-pricey", "mid", "trusted", "cheap-slow")
	want(t, "standing-only", rank(t, newSel(t, Weights{Standing: 0.1}), Weighted, market, Filter{}),
		"trusted", "mid", "fast-pricey", "cheap-slow")
	if rank(t, s, "", market, Filter{})[0] != "fast-pricey" {
		t.Fatal("empty strategy is not weighted")
	}
}

func TestUnknownLatencyTakesTheMedian(t *testing.T) {
	cs := []Candidate{
		cand("a", 100, 100*ms, 100*ms, 5000),
		cand("b", 100, 300*ms, 300*ms, 5000),
		cand("c", 100, 500*ms, 500*ms, 5000),
		cand("new", 100, 0, 0, 5000), // never timed
	}
	s := newSel(t, testWeights)
	// Median of 100/300/500 is 300: "new" ties with b and the peer ID breaks it.
	want(t, "latency", rank(t, s, Latency, cs, Filter{}), "a", "b", "new", "c")
	r, _ := s.Rank(Weighted, cs, Filter{})
	var b, n float64
	for _, c := range r.Order {
		switch c.Peer {
		case "b":
			b = c.Score
		case "new":
			n = c.Score
		}
	}
	if b != n {
		t.Fatalf("unknown latency scored %v, median provider %v", n, b)
	}
	// Nobody timed: latency ranks nobody, price and peer ID decide.
	blind := []Candidate{cand("z", 5, 0, 0, 0), cand("y", 5, 0, 0, 0), cand("x", 3, 0, 0, 0)}
	want(t, "all unknown", rank(t, s, Latency, blind, Filter{}), "x", "y", "z")
}

func TestExclusions(t *testing.T) {
	cs := slices.Clone(market)
	cs[0].Up = false
	cs[1].BreakerReady = false
	cs = append(cs, cand("greedy", 10_000, 10*ms, 10*ms, 10_000), cand("mid", 1, 1, 1, 1),
		cand("banned", 1, 1*ms, 1*ms, 10_000))
	s := newSel(t, testWeights)
	for _, n := range Names {
		r, err := s.Rank(n, cs, Filter{MaxPrice: 1000, Exclude: map[peer.ID]bool{"banned": true}})
		if err != nil {
			t.Fatal(err)
		}
		got := order(r)
		slices.Sort(got)
		want(t, string(n)+" eligible", got, "fast-pricey", "trusted")
		wantEx := []Exclusion{{"cheap-slow", ReasonDown}, {"mid", ReasonBreaker}, {"greedy", ReasonOverPrice},
			{"mid", ReasonDuplicate}, {"banned", ReasonExcluded}}
		if !slices.Equal(r.Excluded, wantEx) {
			t.Fatalf("%s exclusions %v, want %v", n, r.Excluded, wantEx)
		}
	}
	r, err := s.Rank(Price, cs[:2], Filter{})
	if !errors.Is(err, ErrNoCandidate) || len(r.Excluded) != 2 || len(r.Order) != 0 {
		t.Fatalf("all excluded: %v %+v", err, r)
	}
	if _, err := s.Rank(Price, nil, Filter{}); !errors.Is(err, ErrNoCandidate) {
		t.Fatalf("no candidates: %v", err)
	}
	var zero Candidate // the zero value is not up: never routed to by accident
	zero.Peer = "zero"
	if _, err := s.Rank(Weighted, []Candidate{zero}, Filter{}); !errors.Is(err, ErrNoCandidate) {
		t.Fatalf("zero candidate: %v", err)
	}
}

func TestSaturatedGoLast(t *testing.T) {
	cs := slices.Clone(market)
	cs[0].InFlight, cs[0].Capacity = 10, 10 // cheap-slow full
	cs[2].InFlight, cs[2].Capacity = 12, 10 // fast-pricey over
	s := newSel(t, testWeights)
	want(t, "price", rank(t, s, Price, cs, Filter{}), "mid", "trusted", "cheap-slow", "fast-pricey")
	want(t, "latency", rank(t, s, Latency, cs, Filter{}), "mid", "trusted", "fast-pricey", "cheap-slow")
	for i := 0; i < 20; i++ {
		got := rank(t, s, Random, cs, Filter{})
		if slices.Index(got, "cheap-slow") < 2 || slices.Index(got, "fast-pricey") < 2 {
			t.Fatalf("random put a saturated provider first: %v", got)
		}
	}
}

func TestDeterministicTieBreaks(t *testing.T) {
	var cs []Candidate
	for _, id := range []string{"d", "b", "e", "a", "c"} {
		cs = append(cs, cand(id, 100, 50*ms, 40*ms, 8000))
	}
	s := newSel(t, testWeights)
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []Name{Price, Latency, Standing, Weighted} {
		for i := 0; i < 10; i++ {
			r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			want(t, string(n), rank(t, s, n, cs, Filter{}), "a", "b", "c", "d", "e")
		}
	}
	// Equal price: latency breaks the tie under the price strategy.
	tied := []Candidate{cand("slow", 100, 300*ms, 300*ms, 0), cand("fast", 100, 30*ms, 30*ms, 0)}
	want(t, "price tie", rank(t, s, Price, tied, Filter{}), "fast", "slow")
}

func TestRandomIsSeededAndUniform(t *testing.T) {
	a := newSel(t, testWeights)
	b := newSel(t, testWeights)
	for i := 0; i < 10; i++ {
		want(t, "same seed", rank(t, a, Random, market, Filter{}), rank(t, b, Random, market, Filter{})...)
	}
	firsts := map[string]int{}
	const n = 8000
	for i := 0; i < n; i++ {
		firsts[rank(t, a, Random, market, Filter{})[0]]++
	}
	for id, k := range firsts {
		if k < n/4-n/20 || k > n/4+n/20 {
			t.Fatalf("%s primary %d/%d times, want ~%d: %v", id, k, n, n/4, firsts)
		}
	}
}

func TestConcurrentRanking(t *testing.T) {
	s := newSel(t, testWeights)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := s.Rank(Names[(g+i)%len(Names)], market, Filter{}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestParseAndWeights(t *testing.T) {
	for in, w := range map[string]Name{"": Weighted, "price": Price, " Latency ": Latency, "RANDOM": Random} {
		if got, err := Parse(in); err != nil || got != w {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, w)
		}
	}
	if _, err := Parse("cheapest"); !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := newSel(t, testWeights).Rank("fastest", market, Filter{}); !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("rank with unknown name: %v", err)
	}
	for _, w := range []Weights{{}, {Price: -1, Latency: 2}, {Price: math.NaN()}, {Latency: math.Inf(1)},
		{Price: math.MaxFloat64, Latency: math.MaxFloat64}} {
		if _, err := New(w, nil); !errors.Is(err, ErrWeights) {
			t.Errorf("weights %+v: %v, want ErrWeights", w, err)
		}
	}
	s, err := New(DefaultWeights, nil)
	if err != nil || s.Weights() != DefaultWeights {
		t.Fatalf("default selector: %v", err)
	}
	if got := rank(t, s, Random, market, Filter{}); len(got) != 4 {
		t.Fatalf("global-source random: %v", got)
	}
}

func TestCandidatesHelper(t *testing.T) {
	r, err := newSel(t, testWeights).Rank(Price, market, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	cs := r.Candidates()
	if len(cs) != 4 || cs[0].Peer != "cheap-slow" || cs[0] != r.Order[0].Candidate {
		t.Fatalf("candidates %v", cs)
	}
}

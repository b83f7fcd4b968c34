package grammar

import "math"

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s[c>>6] |= 1 << (c & 63)
	}
}

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

func one(c byte) byteSet {
	var s byteSet
	s.add(c, c)
	return s
}

func span(lo, hi byte) byteSet {
	var s byteSet
	s.add(lo, hi)
	return s
}

type elemKind uint8

const (
	elEnd   elemKind = iota // end of an alternative
	elChars                 // one byte from a set
	elRef                   // a rule
)

type elem struct {
	kind elemKind
	rule int32
	set  byteSet
}

// part is an element while a grammar is being built.
type part struct {
	ref  bool
	rule int
	set  byteSet
}

func chars(s byteSet) part { return part{set: s} }
func ref(r int) part       { return part{ref: true, rule: r} }

// lit is the byte sequence of s.
func lit(s string) []part {
	ps := make([]part, len(s))
	for i := range len(s) {
		ps[i] = chars(one(s[i]))
	}
	return ps
}

func seq(groups ...[]part) []part {
	var out []part
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Grammar is a compiled grammar: rules of alternatives of elements,
// flattened into one array so that a parse position is one index.
type Grammar struct {
	elems []elem
	rules [][]int32 // the first element of each alternative, per rule
	start int32
	// rest is, per element, the fewest bytes that finish its alternative
	// from there (it included); math.MaxInt32 when none can.
	rest []int32
}

// builder collects rules; build flattens them.
type builder struct {
	alts  [][][]part
	elems int
}

func (b *builder) rule() int {
	b.alts = append(b.alts, nil)
	return len(b.alts) - 1
}

func (b *builder) alt(r int, ps []part) {
	b.alts[r] = append(b.alts[r], ps)
	b.elems += len(ps) + 1
}

func (b *builder) build(start int) *Grammar {
	g := &Grammar{start: int32(start), rules: make([][]int32, len(b.alts))}
	for r, alts := range b.alts {
		for _, ps := range alts {
			g.rules[r] = append(g.rules[r], int32(len(g.elems)))
			for _, p := range ps {
				if p.ref {
					g.elems = append(g.elems, elem{kind: elRef, rule: int32(p.rule)})
				} else {
					g.elems = append(g.elems, elem{kind: elChars, set: p.set})
				}
			}
			g.elems = append(g.elems, elem{kind: elEnd})
		}
	}
	g.minLengths()
	return g
}

const inf = math.MaxInt32

// minLengths computes rest by fixpoint: a rule's length is its shortest
// alternative's, an alternative's the sum of its elements'.
func (g *Grammar) minLengths() {
	ruleMin := make([]int64, len(g.rules))
	for i := range ruleMin {
		ruleMin[i] = inf
	}
	g.rest = make([]int32, len(g.elems))
	for changed := true; changed; {
		changed = false
		for i := len(g.elems) - 1; i >= 0; i-- {
			var n int64
			switch e := g.elems[i]; e.kind {
			case elEnd:
				n = 0
			case elChars:
				n = 1 + int64(g.rest[i+1])
			case elRef:
				n = ruleMin[e.rule] + int64(g.rest[i+1])
			}
			g.rest[i] = int32(min(n, inf))
		}
		for r, starts := range g.rules {
			best := int64(inf)
			for _, s := range starts {
				best = min(best, int64(g.rest[s]))
			}
			if best < ruleMin[r] {
				ruleMin[r], changed = best, true
			}
		}
	}
}

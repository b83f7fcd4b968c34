package grammar

import (
	"errors"
	"fmt"
	"slices"
)

// Vocab is a tokenizer's vocabulary as the mask reads it: each token's
// bytes in a trie, so that tokens sharing a prefix share the matcher's
// work, and the tokens that end an answer. Build it once per tokenizer.
type Vocab struct {
	size int
	end  []bool
	root trieNode
}

type trieNode struct {
	bytes  []byte // edge labels, ascending
	next   []*trieNode
	tokens []int32
}

// NewVocab indexes pieces (token ID → the bytes it adds to the text).
// Tokens with no bytes (control tokens) are never allowed, except those
// end marks, which end the answer.
func NewVocab(pieces [][]byte, end []int) *Vocab {
	v := &Vocab{size: len(pieces), end: make([]bool, len(pieces))}
	for _, id := range end {
		if id >= 0 && id < len(pieces) {
			v.end[id] = true
		}
	}
	for id, p := range pieces {
		if len(p) == 0 || v.end[id] {
			continue
		}
		n := &v.root
		for _, c := range p {
			i, found := slices.BinarySearch(n.bytes, c)
			if !found {
				n.bytes = slices.Insert(n.bytes, i, c)
				n.next = slices.Insert(n.next, i, &trieNode{})
			}
			n = n.next[i]
		}
		n.tokens = append(n.tokens, int32(id))
	}
	return v
}

// Size is the number of tokens.
func (v *Vocab) Size() int { return v.size }

// cand is a token a state allows and the fewest bytes that complete the
// value after it.
type cand struct {
	id   int32
	need int32
}

// maxCached bounds a Constraint's memo of candidate lists.
const maxCached = 1024

// Constraint walks one answer: the grammar's state after the tokens
// accepted so far. Not safe for concurrent use.
type Constraint struct {
	v     *Vocab
	state State
	ended bool
	// memo maps a state's key to its candidates: inside a string every
	// character leads back to the same state, so most steps are hits.
	memo map[string][]cand
}

// ErrNoToken is returned when no token of the vocabulary continues the
// value within the budget (a vocabulary lacking a needed byte, or a
// budget too small for the shortest valid value).
var ErrNoToken = errors.New("grammar: no token continues the value")

// NewConstraint starts an answer under g.
func (v *Vocab) NewConstraint(g *Grammar) *Constraint {
	return &Constraint{v: v, state: g.Start(), memo: map[string][]cand{}}
}

// Allowed returns the tokens that may come next, in ascending ID order,
// when at most budget tokens (this one included) may still be emitted:
// tokens after which the value can be completed within the budget, one
// byte per token at worst (or, when none can, those nearest completion),
// and the end marks once the value is complete.
// budget ≤ 0 means no limit.
func (c *Constraint) Allowed(budget int) ([]int, error) {
	if c.ended || c.state.Dead() {
		return nil, fmt.Errorf("%w: the answer has ended or left the grammar", ErrNoToken)
	}
	cs := c.candidates()
	// The budget counts one token per byte, the worst case; when even
	// that does not fit, the tokens nearest to completion are kept, so
	// the answer is as close to whole as the budget allows.
	fit := int32(budget - 1)
	if budget <= 0 {
		fit = inf
	} else if least := minNeed(cs); least > fit {
		fit = least
	}
	var ids []int
	for _, t := range cs {
		if t.need <= fit {
			ids = append(ids, int(t.id))
		}
	}
	if c.state.Complete() {
		for id, e := range c.v.end {
			if e {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
	}
	if len(ids) == 0 {
		return nil, ErrNoToken
	}
	return ids, nil
}

func minNeed(cs []cand) int32 {
	least := int32(inf)
	for _, t := range cs {
		least = min(least, t.need)
	}
	return least
}

func (c *Constraint) candidates() []cand {
	k := c.state.Key()
	if cs, ok := c.memo[k]; ok {
		return cs
	}
	var cs []cand
	var walk func(n *trieNode, s State)
	walk = func(n *trieNode, s State) {
		for i, b := range n.bytes {
			s2, ok := s.Advance(b)
			if !ok {
				continue
			}
			child := n.next[i]
			if len(child.tokens) > 0 {
				need := int32(min(s2.MinBytes(), inf))
				for _, id := range child.tokens {
					cs = append(cs, cand{id: id, need: need})
				}
			}
			walk(child, s2)
		}
	}
	walk(&c.v.root, c.state)
	slices.SortFunc(cs, func(a, b cand) int { return int(a.id - b.id) })
	if len(c.memo) >= maxCached {
		clear(c.memo)
	}
	c.memo[k] = cs
	return cs
}

// Accept advances past token id with bytes piece; false when the token
// leaves the grammar (or follows the end).
func (c *Constraint) Accept(id int, piece []byte) bool {
	if c.ended || id < 0 || id >= c.v.size {
		return false
	}
	if c.v.end[id] {
		c.ended = true
		return c.state.Complete()
	}
	s, ok := c.state.AdvanceBytes(piece)
	c.state = s
	return ok && len(piece) > 0
}

// Complete reports whether the text so far is a whole value.
func (c *Constraint) Complete() bool { return c.state.Complete() }

package grammar

import (
	"encoding/binary"
	"slices"
)

// Limits that keep a hostile schema's matcher bounded. A state that would
// exceed them keeps its first stacks in a fixed order: every stack kept
// is a valid parse, so outputs stay valid; only some are no longer
// reachable.
const (
	maxStacks = 512
	maxDepth  = 512
)

// State is where the matcher stands after some bytes: every stack is one
// way to parse them, its top an element that reads a byte; an empty stack
// means the value may end here. States are values: Advance returns a new
// one.
type State struct {
	g      *Grammar
	stacks [][]int32
}

// Start is the state before any byte.
func (g *Grammar) Start() State {
	var x expander
	x.g = g
	x.expand([]int32{}, g.start, true, 0)
	return State{g: g, stacks: x.out}
}

type expander struct {
	g    *Grammar
	out  [][]int32
	seen map[string]bool // once out is long; a scan is cheaper before
}

// scanLimit is how many stacks are deduplicated by a scan before a map
// takes over: most states have one to three.
const scanLimit = 8

func (x *expander) add(st []int32) {
	if len(x.out) >= maxStacks {
		return
	}
	if len(x.out) < scanLimit {
		for _, o := range x.out {
			if slices.Equal(o, st) {
				return
			}
		}
		x.out = append(x.out, st)
		return
	}
	if x.seen == nil {
		x.seen = make(map[string]bool, 2*scanLimit)
		for _, o := range x.out {
			x.seen[key(o)] = true
		}
	}
	k := key(st)
	if x.seen[k] {
		return
	}
	x.seen[k] = true
	x.out = append(x.out, st)
}

func key(st []int32) string {
	b := make([]byte, 4*len(st))
	for i, p := range st {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(p))
	}
	return string(b)
}

// expand pushes rule r (when isRule) onto st, or, with isRule false,
// resolves st's top, until every resulting stack's top reads a byte.
func (x *expander) expand(st []int32, r int32, isRule bool, depth int) {
	if depth > maxDepth {
		return
	}
	if isRule {
		for _, a := range x.g.rules[r] {
			x.expand(push(st, a), 0, false, depth+1)
		}
		return
	}
	if len(st) == 0 {
		x.add(st)
		return
	}
	p := st[len(st)-1]
	switch e := &x.g.elems[p]; e.kind {
	case elChars:
		if x.g.rest[p] < inf {
			x.add(st)
		}
	case elEnd:
		x.expand(st[:len(st)-1:len(st)-1], 0, false, depth+1)
	case elRef:
		base := st[: len(st)-1 : len(st)-1]
		// A call in tail position returns straight to its caller's
		// continuation: repetition by right recursion keeps a flat stack.
		if x.g.elems[p+1].kind != elEnd {
			base = push(base, p+1)
		}
		x.expand(base, e.rule, true, depth+1)
	}
}

// push returns st with p on top, never sharing st's spare capacity.
func push(st []int32, p int32) []int32 {
	out := make([]int32, len(st)+1)
	copy(out, st)
	out[len(st)] = p
	return out
}

// Advance reads byte c; ok is false when no parse accepts it.
func (s State) Advance(c byte) (State, bool) {
	x := expander{g: s.g}
	for _, st := range s.stacks {
		if len(st) == 0 {
			continue
		}
		p := st[len(st)-1]
		if !s.g.elems[p].set.has(c) {
			continue
		}
		next := make([]int32, len(st))
		copy(next, st)
		next[len(st)-1] = p + 1
		x.expand(next, 0, false, 0)
	}
	return State{g: s.g, stacks: x.out}, len(x.out) > 0
}

// AdvanceBytes reads bs in order.
func (s State) AdvanceBytes(bs []byte) (State, bool) {
	for _, c := range bs {
		var ok bool
		if s, ok = s.Advance(c); !ok {
			return s, false
		}
	}
	return s, true
}

// Complete reports whether the bytes read so far are a whole value.
func (s State) Complete() bool {
	for _, st := range s.stacks {
		if len(st) == 0 {
			return true
		}
	}
	return false
}

// Dead reports whether no parse is left.
func (s State) Dead() bool { return len(s.stacks) == 0 }

// MinBytes is the fewest bytes that complete the value from here.
func (s State) MinBytes() int {
	best := int64(inf)
	for _, st := range s.stacks {
		var n int64
		for _, p := range st {
			n += int64(s.g.rest[p])
		}
		best = min(best, n)
	}
	return int(best)
}

// Key identifies the state: equal keys, equal futures.
func (s State) Key() string {
	var b []byte
	for _, st := range s.stacks {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(st)))
		for _, p := range st {
			b = binary.LittleEndian.AppendUint32(b, uint32(p))
		}
	}
	return string(b)
}

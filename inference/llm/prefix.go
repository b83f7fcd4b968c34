package llm

import (
	"sync"
)

// DefaultCacheBytes is the prefix cache's budget when Options.CacheBytes
// is 0: about 3,500 positions of a 100M-weight model (12 layers, KV width
// 256, float32), or a dozen long conversations of the devnet model.
const DefaultCacheBytes = 256 << 20

// maxCacheEntries bounds the entries a lookup scans, whatever their size.
const maxCacheEntries = 64

// prefixCache keeps the KV state of recent conversations (one entry per
// cache key, a session ID) within a byte budget, least recently used out
// first. A keyed generation takes the entry sharing the longest token
// prefix with its prompt: its own key's entry is moved out and extended in
// place; another conversation's entry is left where it is and only its
// shared prefix is copied, so one session cannot take another's state
// away. Calls without a key neither use nor fill the cache, so what they
// bill never depends on earlier calls.
type prefixCache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	tick    uint64
	entries []*cacheEntry
}

type cacheEntry struct {
	key    string
	tokens []int // the tokens whose state seq holds: len(tokens) == seq.n
	seq    *Sequence
	bytes  int64
	last   uint64 // tick of the last use
}

func newPrefixCache(budget int64) *prefixCache {
	if budget <= 0 {
		return nil
	}
	return &prefixCache{budget: budget}
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// take returns a sequence holding the state of the first n tokens of
// tokens (n ≤ limit), for key, or nil and 0 when no entry shares a prefix
// with them. The caller owns the sequence.
func (c *prefixCache) take(key string, tokens []int, limit int) (*Sequence, int) {
	if c == nil || key == "" || limit <= 0 {
		return nil, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestN := -1, 0
	for i, e := range c.entries {
		n := min(commonPrefix(e.tokens, tokens), limit)
		// Prefer the conversation's own entry on a tie: moving it costs
		// nothing, copying another's costs its prefix.
		if n > bestN || (n == bestN && n > 0 && e.key == key) {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return nil, 0
	}
	e := c.entries[best]
	if e.key == key {
		c.remove(best)
		e.seq.truncate(bestN)
		return e.seq, bestN
	}
	c.tick++
	e.last = c.tick
	return e.seq.clonePrefix(bestN), bestN
}

// put keeps seq, which holds the state of tokens, under key, replacing the
// key's older entry, and evicts the least recently used entries beyond the
// budget. Without a key nothing is kept.
func (c *prefixCache) put(key string, tokens []int, seq *Sequence) {
	if c == nil || key == "" || seq == nil || seq.n == 0 || len(tokens) < seq.n {
		return
	}
	seq.dropScratch()
	e := &cacheEntry{key: key, tokens: append([]int(nil), tokens[:seq.n]...), seq: seq, bytes: seq.kvBytes()}
	if e.bytes > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, old := range c.entries {
		if old.key == key {
			c.remove(i)
			break
		}
	}
	c.tick++
	e.last = c.tick
	c.entries = append(c.entries, e)
	c.used += e.bytes
	for c.used > c.budget || len(c.entries) > maxCacheEntries {
		oldest := 0
		for i, x := range c.entries {
			if x.last < c.entries[oldest].last {
				oldest = i
			}
		}
		c.remove(oldest)
	}
}

// remove drops entry i; the caller holds mu.
func (c *prefixCache) remove(i int) {
	c.used -= c.entries[i].bytes
	c.entries = append(c.entries[:i], c.entries[i+1:]...)
}

// stats returns the entries and bytes held.
func (c *prefixCache) stats() (entries int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.used
}

// truncate forgets every position from n on: the next Forward writes
// position n. The cache slots beyond are overwritten before they are read.
func (s *Sequence) truncate(n int) {
	if n < s.n {
		s.n = n
	}
}

// clonePrefix returns a new sequence holding the state of the first n
// positions of s, with s's limits.
func (s *Sequence) clonePrefix(n int) *Sequence {
	c := s.m.NewSequence(s.threads, s.maxLen, s.expert)
	c.layer = s.layer
	c.grow(n)
	kv := s.m.Cfg.KVDim()
	for l := range s.k {
		copy(c.k[l], s.k[l][:n*kv])
		copy(c.v[l], s.v[l][:n*kv])
	}
	c.n = n
	return c
}

// setMaxLen lets a cached sequence grow to maxLen positions (at most the
// model's context), however long its first generation was.
func (s *Sequence) setMaxLen(maxLen int) {
	s.maxLen = min(max(maxLen, s.n, 1), s.m.Cfg.Context)
}

// dropScratch frees the per-call buffers a cached sequence does not need.
func (s *Sequence) dropScratch() {
	s.bufs = map[string][]float32{}
	s.att = scratch{}
}

// kvBytes is the memory the sequence's KV cache holds.
func (s *Sequence) kvBytes() int64 {
	var n int64
	for l := range s.k {
		n += int64(cap(s.k[l])+cap(s.v[l])) * 4
	}
	return n
}

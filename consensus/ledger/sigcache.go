package ledger

import (
	"crypto/sha256"
	"sync"
)

// sigCacheSize bounds each generation of a sigCache: two generations of
// 64Ki 32-byte keys, a few MB.
const sigCacheSize = 1 << 16

// sigCache remembers signatures that verified, so a settlement checked in
// the mempool (Check) is not verified again when its block is finalized:
// signature verification is a pure function of the bytes, so a hit can
// never change an outcome, only save the work. Only successes are kept.
// Two generations bound memory: when the current one fills, it becomes
// the previous one and the older is dropped.
type sigCache struct {
	mu        sync.Mutex
	cur, prev map[[32]byte]struct{}
}

func newSigCache() *sigCache {
	return &sigCache{cur: make(map[[32]byte]struct{}), prev: map[[32]byte]struct{}{}}
}

// key is the cache key of a verification: SHA-256 of tag ‖ parts.
func sigKey(tag byte, parts ...[]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{tag})
	for _, p := range parts {
		h.Write(p)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// verify runs f unless key is known to have verified; it remembers key
// when f succeeds. A nil cache always runs f.
func (c *sigCache) verify(key [32]byte, f func() error) error {
	if c == nil {
		return f()
	}
	c.mu.Lock()
	_, hit := c.cur[key]
	if !hit {
		_, hit = c.prev[key]
	}
	c.mu.Unlock()
	if hit {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= sigCacheSize {
		c.prev, c.cur = c.cur, make(map[[32]byte]struct{}, sigCacheSize)
	}
	c.cur[key] = struct{}{}
	return nil
}

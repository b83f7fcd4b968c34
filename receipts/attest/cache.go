package attest

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache remembers successful verifications per (attestation bytes, bound
// session): a provider re-announces the same attestation every few seconds
// for as long as its session lasts, and verifying it again each time costs
// an RSA-4096 chain check and a P-384 signature (see BenchmarkVerifySEVSNP
// against BenchmarkVerifySEVSNPCached). Only successes are kept, and a hit
// past the result's NotAfter is verified again, so a cached answer is never
// one Verify would not give now. A Cache belongs to one Policy: the roots,
// CRLs and minimum are part of what a hit stands for.
type Cache struct {
	lru *lru.Cache[[32]byte, *Result]
}

// NewCache returns a cache of up to size results (size < 1 means 1024).
func NewCache(size int) *Cache {
	if size < 1 {
		size = 1024
	}
	c, err := lru.New[[32]byte, *Result](size)
	if err != nil {
		panic("attest: lru.New with a positive size: " + err.Error())
	}
	return &Cache{lru: c}
}

// Len is the number of results held.
func (c *Cache) Len() int { return c.lru.Len() }

func (c *Cache) verify(att *Attestation, session Session, p *Policy, now time.Time) (*Result, error) {
	k := cacheKey(att, session)
	if r, ok := c.lru.Get(k); ok {
		if now.Before(r.NotAfter) {
			return r, nil
		}
		c.lru.Remove(k)
	}
	r, err := verifyUncached(att, session, p, now)
	if err != nil {
		return nil, err
	}
	c.lru.Add(k, r)
	return r, nil
}

// cacheKey hashes every field Verify reads, each length-prefixed so no two
// attestations share a key.
func cacheKey(att *Attestation, session Session) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, b := range [][]byte{[]byte(att.Kind), att.Report, att.EKCert, att.Intermediate, att.Root, session.Pub} {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	binary.BigEndian.PutUint64(n[:], uint64(session.NotAfter.UnixNano()))
	h.Write(n[:])
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

package attest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

func TestCacheKeepsSuccessesUntilTheyExpire(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	p := attesttest.Policy(t)
	p.Cache = attest.NewCache(4)
	s := session(pub)
	first, err := attest.Verify(att, s, p, now)
	if err != nil {
		t.Fatal(err)
	}
	again, err := attest.Verify(att, s, p, now.Add(time.Minute))
	if err != nil || again != first {
		t.Fatalf("second verify = %p, %v; want the cached result %p", again, err, first)
	}
	// The same report under another session key: not a hit, refused.
	other := session(attesttest.SessionPub(t))
	if _, err := attest.Verify(att, other, p, now); !errors.Is(err, attest.ErrWrongKey) {
		t.Fatalf("cached report under another key: %v, want attest.ErrWrongKey", err)
	}
	if p.Cache.Len() != 1 {
		t.Fatalf("cache holds %d results, want 1 (refusals are not kept)", p.Cache.Len())
	}
	// Past the session's expiry the hit is dropped and Verify refuses.
	if _, err := attest.Verify(att, s, p, s.NotAfter); !errors.Is(err, attest.ErrSessionExpired) {
		t.Fatalf("cached result past its NotAfter: %v, want attest.ErrSessionExpired", err)
	}
	if p.Cache.Len() != 0 {
		t.Fatalf("expired result still cached (%d)", p.Cache.Len())
	}
}

func TestCacheKeyCoversTheChain(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	p := attesttest.Policy(t)
	p.Cache = attest.NewCache(4)
	if _, err := attest.Verify(att, session(pub), p, now); err != nil {
		t.Fatal(err)
	}
	// Same report, a carried intermediate that is not the trusted one.
	bad := *att
	bad.Intermediate = attesttest.Signer(t).Asvk.Raw
	if _, err := attest.Verify(&bad, session(pub), p, now); !errors.Is(err, attest.ErrChain) {
		t.Fatalf("altered chain after a cached success: %v, want attest.ErrChain", err)
	}
}

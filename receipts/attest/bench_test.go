package attest_test

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// BenchmarkVerifySEVSNP is the validator's cost per attested announcement.
func BenchmarkVerifySEVSNP(b *testing.B) {
	pub := attesttest.SessionPub(b)
	att, p := attesttest.Attestation(b, pub), attesttest.Policy(b)
	s := attest.Session{Pub: pub, NotAfter: attesttest.Now.Add(time.Hour)}
	for b.Loop() {
		if _, err := attest.Verify(att, s, p, attesttest.Now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyTDX verifies the recorded quote up to its binding.
func BenchmarkVerifyTDX(b *testing.B) {
	s := attest.Session{Pub: attesttest.SessionPub(b), NotAfter: recordedAt.Add(time.Hour)}
	att := recordedQuote()
	for b.Loop() {
		if _, err := attest.Verify(att, s, &attest.Policy{}, recordedAt); attest.Reason(err) != "wrong_key" {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySEVSNPCached is the same announcement seen again with a
// Cache: what a validator pays for each re-announcement.
func BenchmarkVerifySEVSNPCached(b *testing.B) {
	pub := attesttest.SessionPub(b)
	att, p := attesttest.Attestation(b, pub), attesttest.Policy(b)
	p.Cache = attest.NewCache(0)
	s := attest.Session{Pub: pub, NotAfter: attesttest.Now.Add(time.Hour)}
	for b.Loop() {
		if _, err := attest.Verify(att, s, p, attesttest.Now); err != nil {
			b.Fatal(err)
		}
	}
}

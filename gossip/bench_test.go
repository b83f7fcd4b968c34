package gossip

import (
	"testing"
	"time"
)

// BenchmarkValidateHeartbeat measures one heartbeat through the full topic
// validator (decode, cached certificate, session signature, pin, window,
// seq) as a steady-state provider's heartbeats arrive. Run with -cpu 1 for
// the one-core figure.
func BenchmarkValidateHeartbeat(b *testing.B) {
	b.Run("memo", func(b *testing.B) { benchHeartbeats(b, true) })
	// Without the certificate memo: the certificate cache alone, as
	// before the scale work (docs/SCALE.md's before/after).
	b.Run("cache-only", func(b *testing.B) { benchHeartbeats(b, false) })
}

func benchHeartbeats(b *testing.B, memo bool) {
	v, msgs := heartbeatsToValidate(b, memo)
	for i := range msgs {
		if r := v.ValidateHeartbeat(tctx, testRelay, msgs[i]); r.Verdict != Accept {
			b.Fatal(r.Err)
		}
	}
}

// heartbeatsToValidate is a validator (with its certificate memo, or
// not) that accepted a provider's announcement, and b.N heartbeats of the
// provider; the timer starts at its return.
func heartbeatsToValidate(b *testing.B, memo bool) (*Validator, [][]byte) {
	now := time.Now()
	v, _ := newTestValidator(now)
	if !memo {
		v.memo = nil
	}
	p := newTestProvider(b, now)
	if r := v.ValidateAnnouncement(tctx, testRelay, p.seal(b, KindAnnounce, p.announcement(now))); r.Verdict != Accept {
		b.Fatal(r.Err)
	}
	msgs := make([][]byte, b.N)
	for i := range msgs {
		msgs[i] = p.seal(b, KindHeartbeat, p.heartbeat(now))
	}
	b.ReportAllocs()
	b.ResetTimer()
	return v, msgs
}

// BenchmarkValidateHeartbeatColdCert is the first heartbeat of a session:
// the certificate's ECDSA and ML-DSA-65 signatures are verified too.
func BenchmarkValidateHeartbeatColdCert(b *testing.B) {
	now := time.Now()
	p := newTestProvider(b, now)
	ann := p.seal(b, KindAnnounce, p.announcement(now))
	msg := p.seal(b, KindHeartbeat, p.heartbeat(now))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, _ := newTestValidator(now)
		v.ValidateAnnouncement(tctx, testRelay, ann)
		if r := v.ValidateHeartbeat(tctx, testRelay, msg); r.Verdict != Accept {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkValidateStaleHeartbeat is a flood of stale (or replayed)
// heartbeats: the window and seq checks decide them before any signature.
func BenchmarkValidateStaleHeartbeat(b *testing.B) {
	now := time.Now()
	v, _ := newTestValidator(now)
	p := newTestProvider(b, now)
	if r := v.ValidateAnnouncement(tctx, testRelay, p.seal(b, KindAnnounce, p.announcement(now))); r.Verdict != Accept {
		b.Fatal(r.Err)
	}
	msg := p.seal(b, KindHeartbeat, p.heartbeat(now.Add(-time.Hour)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := v.ValidateHeartbeat(tctx, testRelay, msg); r.Verdict != Ignore {
			b.Fatal(r.Verdict, r.Err)
		}
	}
}

// BenchmarkGuardedHeartbeat is BenchmarkValidateHeartbeat through the
// service's wrapper (deadline, panic recovery): the wrapper's cost.
func BenchmarkGuardedHeartbeat(b *testing.B) {
	v, msgs := heartbeatsToValidate(b, true)
	for i := range msgs {
		if r := guard(tctx, testRelay, msgs[i], v.ValidateHeartbeat, validateTimeout); r.Verdict != Accept {
			b.Fatal(r.Err)
		}
	}
}

package gossip

import (
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// TestCertMemoTrustsOnlyTheSameBytes: once a provider's certificate is
// remembered, a certificate differing in any field (here a stretched
// validity) is verified in full and refused, and the remembered one still
// expires on this node's clock.
func TestCertMemoTrustsOnlyTheSameBytes(t *testing.T) {
	now := time.Now()
	clk := newMockAt(now)
	v := NewValidator("test", 0, clk, NewFirstSeenPins())
	p := newTestProvider(t, now)
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now))), Accept, ReasonOK)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now))), Accept, ReasonOK)
	if _, ok := v.memo.lookup(&p.sess.Cert); !ok {
		t.Fatal("the verified certificate was not remembered")
	}

	env, err := identity.UnmarshalEnvelope(p.seal(t, KindHeartbeat, p.heartbeat(now)), 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	env.Cert.NotAfter += int64(24 * time.Hour / time.Millisecond)
	// Re-sign the payload with the real session key: only the
	// certificate's own signatures no longer cover it.
	resealed, err := p.sess.Seal(env.Domain, env.PayloadType, env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	env.Sig = resealed.Sig
	b, _ := env.Marshal()
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, b), Reject, ReasonBadCert)

	clk.Set(now.Add(2 * time.Hour)) // past the session's hour and the skew
	hb := p.heartbeat(clk.Now())
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, hb)), Ignore, ReasonCertExpired)
}

func newMockAt(t time.Time) *clock.Mock {
	c := clock.NewMock()
	c.Set(t)
	return c
}

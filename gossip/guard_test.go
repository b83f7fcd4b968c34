package gossip

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

func TestGuardPanicIsIgnore(t *testing.T) {
	r := guard(tctx, testRelay, nil, func(context.Context, peer.ID, []byte) Result {
		var m map[string]int
		m["boom"]++ //nolint:staticcheck // SA5000: the nil-map write is the validator bug under test
		return reject(ReasonInvalid, errors.New("unreachable"))
	}, time.Second)
	wantVerdict(t, r, Ignore, ReasonPanic)
	if r.Err == nil {
		t.Fatal("panic without an error")
	}
}

func TestGuardTimeoutIsIgnore(t *testing.T) {
	slow := func(ctx context.Context, _ peer.ID, _ []byte) Result {
		<-ctx.Done()
		return reject(ReasonInvalid, ctx.Err())
	}
	wantVerdict(t, guard(tctx, testRelay, nil, slow, 10*time.Millisecond), Ignore, ReasonTimeout)

	// The pubsub context ending (shutdown, its own validation timeout)
	// is no verdict on the message either.
	ctx, cancel := context.WithCancel(tctx)
	cancel()
	wantVerdict(t, guard(ctx, testRelay, nil, slow, time.Minute), Ignore, ReasonTimeout)
}

func TestGuardPassesContextAndPeer(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(tctx, key{}, "pubsub")
	var gotPeer peer.ID
	var gotVal any
	var deadline bool
	r := guard(ctx, "propagator", []byte("x"), func(ctx context.Context, from peer.ID, data []byte) Result {
		gotPeer, gotVal = from, ctx.Value(key{})
		_, deadline = ctx.Deadline()
		return reject(ReasonMalformed, errors.New("bad bytes"))
	}, time.Second)
	wantVerdict(t, r, Reject, ReasonMalformed) // a quick Reject stays a Reject
	if gotPeer != "propagator" || gotVal != "pubsub" || !deadline {
		t.Fatalf("validator saw peer %q, ctx value %v, deadline %v", gotPeer, gotVal, deadline)
	}
}

// TestCheapChecksBeforeSignature: a message that fails a cheap check is
// decided on it even when its signature is also bad, and a forged message
// with a high seq does not advance the replay counter of the machine.
func TestCheapChecksBeforeSignature(t *testing.T) {
	now := time.Now()
	v, p := pinned(t, now)
	forge := func(b []byte) []byte {
		env, err := identity.UnmarshalEnvelope(b, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		env.Sig[0] ^= 1
		out, _ := env.Marshal()
		return out
	}
	stale := forge(p.seal(t, KindHeartbeat, p.heartbeat(now.Add(-time.Hour))))
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, stale), Ignore, ReasonStale)

	high := p.heartbeat(now)
	high.Seq += 1 << 40
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, forge(p.seal(t, KindHeartbeat, high))), Reject, ReasonBadSignature)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now))), Accept, ReasonOK)

	hb := p.heartbeat(now)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, hb)), Accept, ReasonOK)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, forge(p.seal(t, KindHeartbeat, hb))), Ignore, ReasonReplay)
}

// TestCertOutsideValidityIgnored: a certificate's validity is judged on
// this node's clock, so a relay whose clock differs is not penalised.
func TestCertOutsideValidityIgnored(t *testing.T) {
	now := time.Now()
	v, clk := newTestValidator(now)
	p := newTestProvider(t, now) // session valid until now+1h
	later := now.Add(2 * time.Hour)
	clk.Set(later)
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(later))), Ignore, ReasonCertExpired)
}

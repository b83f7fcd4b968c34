package gossip

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func TestValidHeartbeatAfterAnnouncement(t *testing.T) {
	now := time.Now()
	v, _ := newTestValidator(now)
	p := newTestProvider(t, now)

	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now))), Ignore, ReasonUnpinned)

	r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now)))
	wantVerdict(t, r, Accept, ReasonOK)
	an := r.Value.(*VerifiedAnnouncement)
	if an.Peer != p.peer || an.Machine != p.id.MachineID() || an.Backend != "software" || an.ReceivedFrom != testRelay {
		t.Fatalf("sender = %+v", an.Sender)
	}
	if m, ok := v.Pins().Lookup(p.peer); !ok || m != p.id.MachineID() {
		t.Fatalf("announcement did not pin the machine")
	}

	r = v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now)))
	wantVerdict(t, r, Accept, ReasonOK)
	if hb := r.Value.(*VerifiedHeartbeat); hb.Seq != p.seq || hb.Capacity != 4 {
		t.Fatalf("heartbeat value = %+v", hb.Heartbeat)
	}
}

// pinned returns a validator with p's announcement accepted.
func pinned(t *testing.T, now time.Time) (*Validator, *testProvider) {
	t.Helper()
	v, _ := newTestValidator(now)
	p := newTestProvider(t, now)
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now))), Accept, ReasonOK)
	return v, p
}

func TestForgedHeartbeats(t *testing.T) {
	now := time.Now()

	t.Run("signed by another machine's key", func(t *testing.T) {
		v, p := pinned(t, now)
		// The attacker holds the victim's libp2p key (not its hardware key)
		// and certifies its own machine's session for the victim's peer.
		forger := newForger(t, p, now)
		hb := forger.heartbeat(now)
		// The pin is this node's view: Ignore, so no relay is penalised.
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, forger.seal(t, KindHeartbeat, hb)), Ignore, ReasonPinMismatch)
	})

	t.Run("body names the pinned machine but the cert is another's", func(t *testing.T) {
		v, p := pinned(t, now)
		forger := newForger(t, p, now)
		hb := p.heartbeat(now)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, forger.seal(t, KindHeartbeat, hb)), Reject, ReasonMachineMismatch)
	})

	t.Run("signature from a key other than the certified session key", func(t *testing.T) {
		v, p := pinned(t, now)
		spare := newTestSession(t, p.id, p.peerKey, now)
		good := p.seal(t, KindHeartbeat, p.heartbeat(now))
		env, err := identity.UnmarshalEnvelope(good, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		other, err := spare.sess.Seal(env.Domain, env.PayloadType, env.Payload)
		if err != nil {
			t.Fatal(err)
		}
		env.Sig = other.Sig // signed by a session key the attached cert does not name
		b, _ := env.Marshal()
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, b), Reject, ReasonBadSignature)
	})

	t.Run("altered after signing", func(t *testing.T) {
		v, p := pinned(t, now)
		env, err := identity.UnmarshalEnvelope(p.seal(t, KindHeartbeat, p.heartbeat(now)), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		var hb Heartbeat
		if err := cborx.Unmarshal(env.Payload, len(env.Payload), &hb); err != nil {
			t.Fatal(err)
		}
		hb.InFlight = 0
		hb.Capacity = 1000
		env.Payload, _ = cborx.Marshal(&hb)
		b, _ := env.Marshal()
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, b), Reject, ReasonBadSignature)
	})

	t.Run("outside the window", func(t *testing.T) {
		v, p := pinned(t, now)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now.Add(-DefaultWindow-time.Second)))), Ignore, ReasonStale)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now.Add(DefaultWindow+time.Second)))), Ignore, ReasonStale)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now.Add(DefaultWindow-time.Second)))), Accept, ReasonOK)
	})

	t.Run("replayed seq", func(t *testing.T) {
		v, p := pinned(t, now)
		hb := p.heartbeat(now)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, hb)), Accept, ReasonOK)
		replay := *hb
		replay.InFlight = 3 // different bytes, same seq: not deduplicated by message ID
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, &replay)), Ignore, ReasonReplay)
		older := *hb
		older.Seq--
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, &older)), Ignore, ReasonReplay)
	})

	t.Run("certificate not chaining to the pinned machine", func(t *testing.T) {
		v, p := pinned(t, now)
		env, err := identity.UnmarshalEnvelope(p.seal(t, KindHeartbeat, p.heartbeat(now)), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		env.Cert.HWSig[len(env.Cert.HWSig)-1] ^= 1
		b, _ := env.Marshal()
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, b), Reject, ReasonBadCert)
	})

	t.Run("announcement envelope on the heartbeat topic", func(t *testing.T) {
		v, p := pinned(t, now)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now))), Reject, ReasonWrongDomain)
	})

	t.Run("oversized", func(t *testing.T) {
		v, _ := pinned(t, now)
		spec, _ := Spec(KindHeartbeat)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, make([]byte, spec.MaxSize+1)), Reject, ReasonTooLarge)
	})

	t.Run("garbage", func(t *testing.T) {
		v, _ := pinned(t, now)
		wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, []byte("not cbor")), Reject, ReasonMalformed)
	})
}

func TestForgedAnnouncements(t *testing.T) {
	now := time.Now()

	t.Run("region finer than a country", func(t *testing.T) {
		for _, region := range []string{"US-CA", "DE-BE", "Berlin, DE", "52.5200,13.4050", "10115"} {
			v, _ := newTestValidator(now)
			p := newTestProvider(t, now)
			an := p.announcement(now)
			an.Region = region
			wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an)), Reject, ReasonRegionTooFine)
			if _, ok := v.Pins().Lookup(p.peer); ok {
				t.Fatalf("rejected announcement pinned %s", region)
			}
		}
	})

	t.Run("another machine after the pin", func(t *testing.T) {
		v, p := pinned(t, now)
		forger := newForger(t, p, now)
		wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, forger.seal(t, KindAnnounce, forger.announcement(now))), Ignore, ReasonPinMismatch)
		if m, _ := v.Pins().Lookup(p.peer); m != p.id.MachineID() {
			t.Fatalf("pin moved to %s", m)
		}
	})

	t.Run("altered after signing", func(t *testing.T) {
		v, _ := newTestValidator(now)
		p := newTestProvider(t, now)
		env, err := identity.UnmarshalEnvelope(p.seal(t, KindAnnounce, p.announcement(now)), 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		var an Announcement
		if err := cborx.Unmarshal(env.Payload, len(env.Payload), &an); err != nil {
			t.Fatal(err)
		}
		an.Models[0].RateCard.OutputTokens = 0
		env.Payload, _ = cborx.Marshal(&an)
		b, _ := env.Marshal()
		wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, b), Reject, ReasonBadSignature)
	})

	t.Run("outside the window and replayed", func(t *testing.T) {
		v, p := pinned(t, now)
		wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now.Add(-time.Hour)))), Ignore, ReasonStale)
		an := p.announcement(now)
		wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an)), Accept, ReasonOK)
		an.Capacity = 9
		wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an)), Ignore, ReasonReplay)
	})

	t.Run("unknown verification level", func(t *testing.T) {
		v, _ := newTestValidator(now)
		p := newTestProvider(t, now)
		an := p.announcement(now)
		an.Models[0].Verification = []terms.Verification{"trust-me"}
		r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an))
		wantVerdict(t, r, Reject, ReasonInvalid)
		if !strings.Contains(r.Err.Error(), "trust-me") {
			t.Fatalf("error does not name the level: %v", r.Err)
		}
	})
}

func TestCheckRegion(t *testing.T) {
	for _, ok := range []string{"DE", "US", "JP", "BR", "Europe", "North America", "Asia"} {
		if err := CheckRegion(ok); err != nil {
			t.Errorf("CheckRegion(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "de", "ZZ", "EU", "Germany", "Mars", "D"} {
		if err := CheckRegion(bad); err == nil {
			t.Errorf("CheckRegion(%q) accepted", bad)
		}
	}
}

package gossip

import (
	"testing"
	"time"
)

// The fuzz targets drive each topic validator with arbitrary bytes, seeded
// with valid messages so mutations reach the deep checks. A validator must
// never panic, and Accept must always come with a verified value.

func FuzzValidateHeartbeat(f *testing.F) {
	now := time.Now()
	p := newTestProvider(f, now)
	f.Add(p.seal(f, KindHeartbeat, p.heartbeat(now)))
	f.Add(p.seal(f, KindAnnounce, p.announcement(now)))
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := newTestValidator(now)
		v.pins.Offer(p.peer, p.id.MachineID())
		r := v.ValidateHeartbeat(tctx, testRelay, data)
		if r.Verdict == Accept {
			hb, ok := r.Value.(*VerifiedHeartbeat)
			if !ok || hb.Check() != nil || hb.Machine != p.id.MachineID() {
				t.Fatalf("accepted without a valid value: %+v", r.Value)
			}
		} else if r.Err == nil {
			t.Fatalf("%s without an error", r.Verdict)
		}
	})
}

func FuzzValidateAnnouncement(f *testing.F) {
	now := time.Now()
	p := newTestProvider(f, now)
	f.Add(p.seal(f, KindAnnounce, p.announcement(now)))
	f.Add(p.seal(f, KindHeartbeat, p.heartbeat(now)))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := newTestValidator(now)
		r := v.ValidateAnnouncement(tctx, testRelay, data)
		if r.Verdict == Accept {
			an, ok := r.Value.(*VerifiedAnnouncement)
			if !ok || an.Check() != nil {
				t.Fatalf("accepted without a valid value: %+v", r.Value)
			}
			if m, ok := v.pins.Lookup(an.Peer); !ok || m != an.Machine {
				t.Fatalf("accepted announcement not pinned")
			}
		} else if r.Err == nil {
			t.Fatalf("%s without an error", r.Verdict)
		}
	})
}

func FuzzCheckRegion(f *testing.F) {
	for _, s := range []string{"DE", "US-CA", "Europe", "52.1,13.2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckRegion(s) == nil && !continents[s] && !isCountry(s) {
			t.Fatalf("accepted %q", s)
		}
	})
}

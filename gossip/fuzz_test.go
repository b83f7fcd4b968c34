package gossip

import (
	"testing"
	"time"
)

// The fuzz targets drive each topic validator with arbitrary bytes, seeded
// with valid messages so mutations reach the deep checks. A validator must
// never panic, Accept must always come with a verified value, and Reject
// only ever names a fault of the message's own bytes (wantOwnFault).

// ownFaults are the reasons a Reject may give: faults any node sees in the
// bytes alone, whatever its pins, chain view or clock.
var ownFaults = map[string]bool{
	ReasonTooLarge: true, ReasonMalformed: true, ReasonWrongDomain: true, ReasonBadCert: true,
	ReasonBadSignature: true, ReasonMachineMismatch: true, ReasonInvalid: true, ReasonRegionTooFine: true,
}

func wantOwnFault(t *testing.T, r Result) {
	t.Helper()
	if r.Verdict == Reject && !ownFaults[r.Reason] {
		t.Fatalf("rejected for %s, which depends on this node's view: %v", r.Reason, r.Err)
	}
}

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
		wantOwnFault(t, r)
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
	holder := p.announcement(now)
	holder.Models = nil
	holder.Experts = []ExpertOffer{{ModelID: testModelID[:], Layers: []uint32{0, 1}, Experts: []uint32{2}, PricePerToken: 3}}
	f.Add(p.seal(f, KindAnnounce, holder))
	moe := p.announcement(now)
	moe.Models[0].MoE = &MoEShape{Layers: 4, TopK: 2}
	f.Add(p.seal(f, KindAnnounce, moe))
	f.Add(p.seal(f, KindHeartbeat, p.heartbeat(now)))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := newTestValidator(now)
		r := v.ValidateAnnouncement(tctx, testRelay, data)
		wantOwnFault(t, r)
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

package gossip

import (
	"testing"
	"time"
)

func TestExpertOffers(t *testing.T) {
	now := time.Now()
	offer := func() ExpertOffer {
		return ExpertOffer{ModelID: testModelID[:], Layers: []uint32{0, 2}, Experts: []uint32{1, 3, 5}, PricePerToken: 7}
	}

	t.Run("a holder of experts only", func(t *testing.T) {
		v, _ := newTestValidator(now)
		p := newTestProvider(t, now)
		an := p.announcement(now)
		an.Models, an.Experts = nil, []ExpertOffer{offer()}
		r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an))
		wantVerdict(t, r, Accept, ReasonOK)
		got := r.Value.(*VerifiedAnnouncement).Experts
		if len(got) != 1 || !got[0].Holds(2, 5) || got[0].Holds(1, 5) || got[0].Holds(2, 2) || got[0].PricePerToken != 7 {
			t.Fatalf("accepted offers %+v", got)
		}
	})

	bad := map[string]func(a *Announcement){
		"no models and no experts": func(a *Announcement) { a.Models, a.Experts = nil, nil },
		"short model ID":           func(a *Announcement) { a.Experts[0].ModelID = testModelID[:8] },
		"layers not ascending":     func(a *Announcement) { a.Experts[0].Layers = []uint32{2, 0} },
		"repeated expert":          func(a *Announcement) { a.Experts[0].Experts = []uint32{1, 1} },
		"expert out of range":      func(a *Announcement) { a.Experts[0].Experts = []uint32{256} },
		"no layers":                func(a *Announcement) { a.Experts[0].Layers = nil },
		"model offered twice":      func(a *Announcement) { a.Experts = append(a.Experts, offer()) },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			v, _ := newTestValidator(now)
			p := newTestProvider(t, now)
			an := p.announcement(now)
			an.Experts = []ExpertOffer{offer()}
			mutate(an)
			wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an)), Reject, ReasonInvalid)
		})
	}
}

// TestMoEShape: a model offer may state its MoE shape, bounded; a dense
// offer without one encodes as before the field existed.
func TestMoEShape(t *testing.T) {
	now := time.Now()
	for name, tc := range map[string]struct {
		shape *MoEShape
		ok    bool
	}{
		"dense":         {nil, true},
		"devnet shape":  {&MoEShape{Layers: 4, TopK: 2}, true},
		"no layers":     {&MoEShape{Layers: 0, TopK: 2}, false},
		"top-k 0":       {&MoEShape{Layers: 4, TopK: 0}, false},
		"top-k 257":     {&MoEShape{Layers: 4, TopK: 257}, false},
		"layers 2^16+1": {&MoEShape{Layers: 1<<16 + 1, TopK: 1}, false},
	} {
		t.Run(name, func(t *testing.T) {
			v, _ := newTestValidator(now)
			p := newTestProvider(t, now)
			an := p.announcement(now)
			an.Models[0].MoE = tc.shape
			r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an))
			if tc.ok {
				wantVerdict(t, r, Accept, ReasonOK)
				if got := r.Value.(*VerifiedAnnouncement).Models[0].MoE.ExpertsPerToken(); got != tc.shape.ExpertsPerToken() {
					t.Fatalf("experts per token %d", got)
				}
				return
			}
			wantVerdict(t, r, Reject, ReasonInvalid)
		})
	}
	if (&MoEShape{Layers: 1 << 16, TopK: 256}).ExpertsPerToken() != 1<<24 {
		t.Fatal("experts per token")
	}
}

package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func holderConfig() Config {
	c := DefaultConfig()
	c.Region = "DE"
	c.Experts = []ExpertConfig{{Model: strings.Repeat("cd", 32), Dir: "models/moe", Layers: []uint32{0, 1}, Experts: []uint32{2, 3}, PricePerToken: 4}}
	return c
}

// TestExpertConfigErrorsNameTheKey: a holder of experts only is valid,
// and every bad [[provider.experts]] or [provider.remote_experts] value is
// refused naming its key.
func TestExpertConfigErrorsNameTheKey(t *testing.T) {
	if err := holderConfig().Validate(); err != nil {
		t.Fatalf("a holder of experts only: %v", err)
	}
	for key, mutate := range map[string]func(*Config){
		"provider.experts[0].model":          func(c *Config) { c.Experts[0].Model = "xyz" },
		"provider.experts[0].dir":            func(c *Config) { c.Experts[0].Dir = "" },
		"provider.experts[0].layers":         func(c *Config) { c.Experts[0].Layers = []uint32{1, 0} },
		"provider.experts[1].model":          func(c *Config) { c.Experts = append(c.Experts, c.Experts[0]) },
		"provider.models":                    func(c *Config) { c.Experts = nil },
		"provider.remote_experts.models":     func(c *Config) { c.RemoteExperts.Models = []string{"nope"} },
		"provider.remote_experts.timeout":    func(c *Config) { c.RemoteExperts.Models, c.RemoteExperts.Timeout = []string{"x"}, 0 },
		"provider.remote_experts.holder_ttl": func(c *Config) { c.RemoteExperts.Models, c.RemoteExperts.HolderTTL = []string{"x"}, 0 },
		"provider.remote_experts.dispute_interval": func(c *Config) {
			c.RemoteExperts.Models, c.RemoteExperts.DisputeInterval = []string{"x"}, time.Millisecond
		},
	} {
		c := holderConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v does not name the key", key, err)
		}
	}
	c := validConfig()
	c.RemoteExperts.Models = []string{"m"} // served by the upstream engine
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "provider.remote_experts.models") {
		t.Errorf("remote experts of an upstream model accepted: %v", err)
	}
	// An expert-token rate only on a model whose experts run at holders.
	c = validConfig()
	c.Models[0].RateCard.ExpertTokens = 2
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "provider.models[0].rate_card.expert_tokens") {
		t.Errorf("expert_tokens on a model without remote experts: %v", err)
	}
}

// TestExpertTableOrder: holders come in the same rendezvous order for
// every caller, each first for a share of the experts, and an
// announcement older than the TTL no longer counts.
func TestExpertTableOrder(t *testing.T) {
	clk := clock.NewMock()
	tbl := newExpertTable("self", time.Minute, clk)
	model := [32]byte{9}
	all := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
	peers := []peer.ID{"holder-a", "holder-b", "holder-c"}
	for i, p := range peers {
		tbl.apply(&gossip.VerifiedAnnouncement{Sender: gossip.Sender{Peer: p, Machine: identity.MachineID{byte(i + 1)}},
			Announcement: gossip.Announcement{Experts: []gossip.ExpertOffer{{ModelID: model[:], Layers: []uint32{0, 1, 2, 3}, Experts: all, PricePerToken: 2}}}})
	}
	tbl.apply(&gossip.VerifiedAnnouncement{Sender: gossip.Sender{Peer: "self", Machine: identity.MachineID{7}},
		Announcement: gossip.Announcement{Experts: []gossip.ExpertOffer{{ModelID: model[:], Layers: []uint32{0}, Experts: all}}}})
	first := map[peer.ID]int{}
	for l := range 4 {
		for e := range 8 {
			hs := tbl.Holders(model, l, e)
			if len(hs) != 3 {
				t.Fatalf("layer %d expert %d: %d holders, want 3 (never itself)", l, e, len(hs))
			}
			first[hs[0].Peer]++
			if again := tbl.Holders(model, l, e); again[0] != hs[0] || again[2] != hs[2] {
				t.Fatal("order changed between two lookups")
			}
		}
	}
	for _, p := range peers {
		if first[p] == 0 {
			t.Fatalf("%s is never first choice: %v", p, first)
		}
	}
	if hs := tbl.Holders(model, 4, 0); len(hs) != 0 {
		t.Fatalf("holders of a layer nobody holds: %v", hs)
	}
	clk.Add(2 * time.Minute)
	if hs := tbl.Holders(model, 0, 0); len(hs) != 0 {
		t.Fatalf("stale holders still listed: %v", hs)
	}
}

// TestExpertTableRestart: a holder's first announcement, and its repeats
// under the same session, are not a restart; one under a new session key
// is, so the callers forgive the failures of its last run.
func TestExpertTableRestart(t *testing.T) {
	tbl := newExpertTable("self", time.Minute, clock.NewMock())
	model := [32]byte{9}
	ann := func(session string) *gossip.VerifiedAnnouncement {
		return &gossip.VerifiedAnnouncement{Sender: gossip.Sender{Peer: "holder", Machine: identity.MachineID{1}, Cert: identity.Certificate{SessionPub: []byte(session)}},
			Announcement: gossip.Announcement{Experts: []gossip.ExpertOffer{{ModelID: model[:], Layers: []uint32{0}, Experts: []uint32{0}}}}}
	}
	for i, c := range []struct {
		session   string
		restarted bool
	}{{"a", false}, {"a", false}, {"b", true}, {"b", false}} {
		if got := tbl.apply(ann(c.session)); got != c.restarted {
			t.Fatalf("announcement %d (session %s): restarted %v, want %v", i, c.session, got, c.restarted)
		}
	}
	if hs := tbl.Holders(model, 0, 0); len(hs) != 1 {
		t.Fatalf("holders after the restart: %v", hs)
	}
}

package router

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func announce(t *Table, p string, models ...gossip.ModelOffer) {
	m := identity.MachineID{byte(len(p)), p[len(p)-1]}
	t.ApplyAnnouncement(&gossip.VerifiedAnnouncement{
		Sender:       gossip.Sender{Peer: peer.ID(p), Machine: m, Received: time.Unix(1_800_000_000, 0)},
		Announcement: gossip.Announcement{MachineID: m[:], Region: "DE", HardwareClass: "x", Models: models},
	})
}

func offerOf(id byte, name string) gossip.ModelOffer {
	mid := make([]byte, 32)
	mid[0] = id
	return gossip.ModelOffer{ModelID: mid, Name: name, Verification: []terms.Verification{terms.VerifyNone}}
}

func peersOf(os []Offer) string {
	var out []string
	for _, o := range os {
		out = append(out, string(o.Peer)+":"+o.Model.Name)
	}
	return strings.Join(out, ",")
}

// TestOffersFollowReannouncements: the model index moves a provider when
// its announcement changes what it serves, answers by name and by ID in
// peer order, and lists a provider offering one ID under two names once
// per offer.
func TestOffersFollowReannouncements(t *testing.T) {
	clk := clock.NewMock()
	tb := NewTable(clk, nil)
	announce(tb, "p3", offerOf(1, "llama"))
	announce(tb, "p1", offerOf(1, "llama"), offerOf(0xab, "qwen"))
	announce(tb, "p2", offerOf(0xab, "qwen"))
	id1 := hex.EncodeToString(offerOf(1, "").ModelID)
	if got := peersOf(tb.Offers("llama")); got != "p1:llama,p3:llama" {
		t.Fatalf("llama: %s", got)
	}
	if got := peersOf(tb.Offers(id1)); got != "p1:llama,p3:llama" {
		t.Fatalf("by ID: %s", got)
	}
	idAB := hex.EncodeToString(offerOf(0xab, "").ModelID)
	if got := peersOf(tb.Offers(idAB)); got != "p1:qwen,p2:qwen" {
		t.Fatalf("qwen by ID: %s", got)
	}
	if got := tb.Offers(strings.ToUpper(idAB)); len(got) != 0 {
		t.Fatalf("upper-case hex matched %s", peersOf(got))
	}
	// p1 drops llama and announces ID 1 under another name too.
	announce(tb, "p1", offerOf(0xab, "qwen"), offerOf(1, "llama-alias"))
	if got := peersOf(tb.Offers("llama")); got != "p3:llama" {
		t.Fatalf("llama after p1 changed: %s", got)
	}
	if got := peersOf(tb.Offers(id1)); got != "p1:llama-alias,p3:llama" {
		t.Fatalf("ID 1 after p1 changed: %s", got)
	}
	if got := peersOf(tb.Offers("qwen")); got != "p1:qwen,p2:qwen" {
		t.Fatalf("qwen: %s", got)
	}
	// A name spelled like an ID is a name too: both lists merge, each
	// provider once.
	announce(tb, "p0", offerOf(3, id1))
	if got := peersOf(tb.Offers(id1)); got != "p0:"+id1+",p1:llama-alias,p3:llama" {
		t.Fatalf("name spelled as ID: %s", got)
	}
	announce(tb, "p3", offerOf(0xab, "qwen"))
	if got := tb.models.byName["llama"]; len(got) != 0 {
		t.Fatalf("empty list kept: %v", got)
	}
	if got := slices.Collect(func(yield func(string) bool) {
		for _, o := range tb.Offers("qwen") {
			if !yield(string(o.Peer)) {
				return
			}
		}
	}); !slices.Equal(got, []string{"p1", "p2", "p3"}) {
		t.Fatalf("qwen after p3 changed: %v", got)
	}
}

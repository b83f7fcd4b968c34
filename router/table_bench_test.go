package router

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// marketTable is a table of n providers up, each offering the popular
// model and one of ten others, as the scale harness's gateways hold.
func marketTable(b *testing.B, n int) (*Table, [32]byte) {
	b.Helper()
	clk := clock.NewMock()
	clk.Set(time.Unix(1_800_000_000, 0))
	t := NewTable(clk, nil)
	popular := sha256.Sum256([]byte("popular"))
	for i := range n {
		other := sha256.Sum256(fmt.Appendf(nil, "model-%d", i%10))
		m := identity.MachineID(sha256.Sum256(fmt.Appendf(nil, "machine-%d", i)))
		p := peer.ID(fmt.Sprintf("provider-%05d", i))
		offer := func(id [32]byte, name string) gossip.ModelOffer {
			return gossip.ModelOffer{ModelID: id[:], Name: name, WeightsHash: id[:], Engine: "embedded",
				RateCard:     terms.RateCard{InputTokens: uint64(1 + i%7), OutputTokens: uint64(2 + i%11), Minimum: 10},
				Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}}
		}
		snd := gossip.Sender{Peer: p, Machine: m, Backend: "software", Received: clk.Now()}
		t.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: snd, Announcement: gossip.Announcement{
			MachineID: m[:], Region: "DE", HardwareClass: "cpu", Capacity: 4,
			Models: []gossip.ModelOffer{offer(popular, "popular"), offer(other, fmt.Sprint("other-", i%10))}}})
		t.ApplyHeartbeat(&gossip.VerifiedHeartbeat{Sender: snd, Heartbeat: gossip.Heartbeat{MachineID: m[:], Seq: 1, Capacity: 4,
			Models: []gossip.ModelStatus{{ModelID: popular[:], State: gossip.StateWarm}, {ModelID: other[:], State: gossip.StateWarm}}}})
	}
	return t, popular
}

// BenchmarkOffersOf is the table's share of one request's quote: the
// offers of one catalog ID among n providers.
func BenchmarkOffersOf(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t, id := marketTable(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if got := len(t.OffersOf(id)); got != n {
					b.Fatalf("%d offers, want %d", got, n)
				}
			}
		})
	}
}

// BenchmarkQuotesOf is a whole quote of one request at n providers: the
// offers, a priced and digested quote per offer, sorted.
func BenchmarkQuotesOf(b *testing.B) {
	s := pricing.Surcharges{Receipt: 1}
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t, id := marketTable(b, n)
			b.ReportAllocs()
			for b.Loop() {
				q, err := t.QuotesOf(id, pricing.Units{InputTokens: 200, OutputTokens: 256}, terms.VerifyReceipt, s)
				if err != nil || len(q) != n {
					b.Fatalf("%d quotes, %v", len(q), err)
				}
			}
		})
	}
}

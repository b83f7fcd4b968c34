package gossip

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// disagreeingPins is a chain view that pins every peer to one machine: a
// node whose registrations differ from its neighbours'.
type disagreeingPins struct{ m identity.MachineID }

func (d disagreeingPins) Lookup(peer.ID) (identity.MachineID, bool)            { return d.m, true }
func (d disagreeingPins) Offer(peer.ID, identity.MachineID) identity.MachineID { return d.m }

func newNetHost(t *testing.T, key crypto.PrivKey) host.Host {
	t.Helper()
	if key == nil {
		return p2ptest.Host(t)
	}
	return p2ptest.Host(t, libp2p.Identity(key))
}

func newNetService(t *testing.T, h host.Host, pins Pins) *Service {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, Config{Network: "test", Window: DefaultWindow}, Deps{Host: h, Pins: pins})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(ctx) })
	return s
}

func connect(t *testing.T, a, b host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// countEvents counts the announce-topic tap events from `from` with the
// verdict and reason ("" for any reason).
func countEvents(s *Service, from peer.ID, verdict Verdict, reason string) int {
	evs, _ := s.Tap().Since(context.Background(), 0, KindAnnounce, 4096, 0)
	n := 0
	for _, e := range evs {
		if e.ReceivedFrom == from.String() && e.Verdict == verdict.String() && (reason == "" || e.Reason == reason) {
			n++
		}
	}
	return n
}

// TestRelayNotPenalisedForAnotherView: publisher P — honest relay R — node
// N, where N's pins disagree with R's. N ignores every announcement R
// forwards and keeps R's score non-negative, while a peer X sending
// announcements invalid on their own bytes is rejected and scored down.
func TestRelayNotPenalisedForAnotherView(t *testing.T) {
	now := time.Now()
	prov := newTestProvider(t, now)
	hp, hr, hn, hx := newNetHost(t, prov.peerKey), newNetHost(t, nil), newNetHost(t, nil), newNetHost(t, nil)
	p := newNetService(t, hp, nil)
	r := newNetService(t, hr, nil)
	n := newNetService(t, hn, disagreeingPins{m: identity.MachineID{0xee}})
	connect(t, hp, hr)
	connect(t, hr, hn)
	connect(t, hx, hn)

	// X speaks gossipsub with the network's message format but validates
	// nothing: it forwards forged announcements.
	xps, err := pubsub.NewGossipSub(context.Background(), hx, pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(), pubsub.WithMessageIdFn(MessageID))
	if err != nil {
		t.Fatal(err)
	}
	xt, err := xps.Join(TopicName("test", KindAnnounce))
	if err != nil {
		t.Fatal(err)
	}

	const forwarded = 30
	deadline := time.Now().Add(15 * time.Second)
	for countEvents(n, hr.ID(), Ignore, ReasonPinMismatch) < forwarded {
		if time.Now().After(deadline) {
			t.Fatalf("N saw %d announcements forwarded by R, want %d", countEvents(n, hr.ID(), Ignore, ReasonPinMismatch), forwarded)
		}
		if err := p.Publish(context.Background(), prov.sess, KindAnnounce, prov.announcement(time.Now())); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := countEvents(r, hp.ID(), Accept, ReasonOK); got < forwarded {
		t.Fatalf("R accepted %d announcements, want >= %d", got, forwarded)
	}
	if got := countEvents(n, hr.ID(), Reject, ""); got != 0 {
		t.Fatalf("N rejected %d messages from the honest relay", got)
	}

	forged := prov.announcement(time.Now())
	forged.Capacity = 99
	b := prov.seal(t, KindAnnounce, forged)
	env, err := identity.UnmarshalEnvelope(b, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	env.Sig[3] ^= 1
	bad, _ := env.Marshal()

	deadline = time.Now().Add(10 * time.Second)
	for {
		sx, okx := n.PeerScore(hx.ID())
		sr, okr := n.PeerScore(hr.ID())
		if okx && sx < 0 && okr {
			if sr < 0 {
				t.Fatalf("N scores the honest relay R %v after %d ignored forwards", sr, forwarded)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("X not scored down: X %v (%v), R %v (%v)", sx, okx, sr, okr)
		}
		if countEvents(n, hx.ID(), Reject, ReasonBadSignature) == 0 {
			_ = xt.Publish(context.Background(), bad)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if countEvents(n, hx.ID(), Reject, ReasonBadSignature) == 0 {
		t.Fatal("N did not reject the forged announcement")
	}
}

package gossip

import (
	"context"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// testProvider is a real software-backed machine identity with a session
// certified for a fresh libp2p peer ID.
type testProvider struct {
	id      *identity.Identity
	peerKey crypto.PrivKey
	peer    peer.ID
	sess    *identity.Session
	seq     uint64
}

func newTestProvider(t testing.TB, now time.Time) *testProvider {
	t.Helper()
	key, _ := identitytest.PeerKey(t)
	return newTestSession(t, identitytest.Open(t), key, now)
}

// newTestSession certifies a session of machine id for the peer of key.
// Tests that give it another provider's peer key model an attacker who stole
// a libp2p key but not the machine's hardware key.
func newTestSession(t testing.TB, id *identity.Identity, key crypto.PrivKey, now time.Time) *testProvider {
	t.Helper()
	pid, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sess := identitytest.Session(t, id, key, now.Add(-time.Minute), now.Add(time.Hour))
	return &testProvider{id: id, peerKey: key, peer: pid, sess: sess, seq: 100}
}

// newForger is an attacker who holds victim's libp2p key, not its
// hardware key, and certifies its own machine's session for victim's peer.
func newForger(t testing.TB, victim *testProvider, now time.Time) *testProvider {
	t.Helper()
	return newTestSession(t, newTestProvider(t, now).id, victim.peerKey, now)
}

func (p *testProvider) machine() []byte { m := p.id.MachineID(); return m[:] }

func (p *testProvider) heartbeat(now time.Time) *Heartbeat {
	p.seq++
	return &Heartbeat{
		MachineID: p.machine(), Seq: p.seq, TimeMs: now.UnixMilli(),
		Models:   []ModelStatus{{ModelID: testModelID[:], State: StateWarm}},
		InFlight: 1, Capacity: 4, QueueDepth: 0,
	}
}

func (p *testProvider) announcement(now time.Time) *Announcement {
	p.seq++
	return &Announcement{
		MachineID: p.machine(), Seq: p.seq, TimeMs: now.UnixMilli(),
		Models: []ModelOffer{{
			ModelID: testModelID[:], Name: "tiny", WeightsHash: testModelID[:], Engine: "embedded",
			RateCard:     RateCard{InputTokens: 1, OutputTokens: 2, Minimum: 10},
			Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt},
		}},
		Region: "DE", HardwareClass: "cpu-generic", Capacity: 4,
	}
}

var testModelID = [32]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

// seal signs msg as kind with the provider's session and returns the bytes
// as they would travel on the topic.
func (p *testProvider) seal(t testing.TB, kind Kind, msg any) []byte {
	t.Helper()
	spec, _ := Spec(kind)
	payload, err := cborx.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return identitytest.Seal(t, p.sess, spec.Domain, spec.PayloadType, payload)
}

func newTestValidator(now time.Time) (*Validator, *clock.Mock) {
	clk := clock.NewMock()
	clk.Set(now)
	return NewValidator("test", 0, clk, NewFirstSeenPins()), clk
}

func wantVerdict(t *testing.T, r Result, v Verdict, reason string) {
	t.Helper()
	if r.Verdict != v || r.Reason != reason {
		t.Fatalf("got %s/%s (%v), want %s/%s", r.Verdict, r.Reason, r.Err, v, reason)
	}
}

// tctx and testRelay are the pubsub context and propagating peer the unit
// tests hand the validators.
var (
	tctx      = context.Background()
	testRelay = peer.ID("relay")
)

package gossip

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// stubSet is a consensus view: active validator accounts and registered
// providers (machine → operator, peer).
type stubSet struct {
	active    map[[32]byte]bool
	providers map[identity.MachineID]stubProvider
	err       error
}

type stubProvider struct {
	operator [32]byte
	peer     string
}

func (s *stubSet) ActiveValidator(_ context.Context, a [32]byte) (bool, error) {
	return s.active[a], s.err
}

func (s *stubSet) ProviderOperator(_ context.Context, m identity.MachineID) ([32]byte, string, bool, error) {
	p, ok := s.providers[m]
	return p.operator, p.peer, ok, s.err
}

func account(priv ed25519.PrivateKey) (a [32]byte) {
	copy(a[:], priv.Public().(ed25519.PublicKey))
	return a
}

func newAccountKey(t testing.TB) ed25519.PrivateKey {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// obsFixture: a provider run by provOp, a validator node (machine identity
// + session) whose operator account is valOp, and a validator set in which
// valOp is active.
type obsFixture struct {
	prov, node *testProvider
	provOp     ed25519.PrivateKey
	valOp      ed25519.PrivateKey
	set        *stubSet
	v          *Validator
	now        time.Time
	seq        uint64
}

func newObsFixture(t testing.TB) *obsFixture {
	now := time.Now()
	f := &obsFixture{prov: newTestProvider(t, now), node: newTestProvider(t, now),
		provOp: newAccountKey(t), valOp: newAccountKey(t), now: now}
	f.set = &stubSet{active: map[[32]byte]bool{account(f.valOp): true},
		providers: map[identity.MachineID]stubProvider{f.prov.id.MachineID(): {operator: account(f.provOp), peer: f.prov.peer.String()}}}
	f.v, _ = newTestValidator(now)
	f.v.SetValidatorSet(f.set)
	return f
}

// obs is an observation of one successful call to the provider.
func (f *obsFixture) obs() *PriceObs {
	f.seq++
	return &PriceObs{ProviderPeer: f.prov.peer.String(), ProviderMachine: f.prov.machine(), ModelID: testModelID[:],
		Price: 120, LatencyMs: 35, InputTokens: 7, OutputTokens: 4, Success: true, TimeMs: f.now.UnixMilli(), Seq: f.seq}
}

func (f *obsFixture) signed(t testing.TB, o *PriceObs, key ed25519.PrivateKey) []byte {
	if err := SignObservation(o, key); err != nil {
		t.Fatal(err)
	}
	return f.node.seal(t, KindPriceObs, o)
}

func TestPriceObsAcceptedFromValidator(t *testing.T) {
	f := newObsFixture(t)
	r := f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), f.valOp))
	wantVerdict(t, r, Accept, ReasonOK)
	got := r.Value.(*VerifiedPriceObs)
	if got.Price != 120 || string(got.Observer) != string(f.valOp.Public().(ed25519.PublicKey)) {
		t.Fatalf("value %+v", got)
	}
}

// Verdicts that rest on this node's chain view are Ignore: another node
// may already (or still) see the observer as a validator, or the provider
// registered otherwise, and must not be penalised for relaying.
func TestPriceObsNonValidatorIgnored(t *testing.T) {
	f := newObsFixture(t)
	stranger := newAccountKey(t)
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), stranger)), Ignore, ReasonNotValidator)
	// The provider's own operator is not a validator either.
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), f.provOp)), Ignore, ReasonNotValidator)
}

func TestPriceObsOwnProviderIgnored(t *testing.T) {
	f := newObsFixture(t)
	// The validator's operator also operates the provider.
	f.set.providers[f.prov.id.MachineID()] = stubProvider{operator: account(f.valOp), peer: f.prov.peer.String()}
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), f.valOp)), Ignore, ReasonOwnProvider)
}

func TestPriceObsForgedRejected(t *testing.T) {
	f := newObsFixture(t)
	// Altered after signing: a lower price under the validator's signature.
	o := f.obs()
	if err := SignObservation(o, f.valOp); err != nil {
		t.Fatal(err)
	}
	o.Price = 1
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.node.seal(t, KindPriceObs, o)), Reject, ReasonBadSignature)

	// Claims a validator's account but is signed by another key.
	o = f.obs()
	other := newAccountKey(t)
	if err := SignObservation(o, other); err != nil {
		t.Fatal(err)
	}
	o.Observer = HexBytes(f.valOp.Public().(ed25519.PublicKey))
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.node.seal(t, KindPriceObs, o)), Reject, ReasonBadSignature)

	// Envelope bytes flipped in transit.
	b := f.signed(t, f.obs(), f.valOp)
	b[len(b)/2] ^= 0x40
	if r := f.v.ValidatePriceObs(tctx, testRelay, b); r.Verdict != Reject {
		t.Fatalf("tampered envelope: %s/%s", r.Verdict, r.Reason)
	}

	// A provider peer other than the machine's registration here: this
	// node's chain view, so Ignore.
	o = f.obs()
	o.ProviderPeer = f.node.peer.String()
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, o, f.valOp)), Ignore, ReasonPinMismatch)

	// An observation sealed as a heartbeat.
	o = f.obs()
	if err := SignObservation(o, f.valOp); err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.node.seal(t, KindHeartbeat, o)), Reject, ReasonWrongDomain)
}

func TestPriceObsReplayStaleUnknownIgnored(t *testing.T) {
	f := newObsFixture(t)
	b := f.signed(t, f.obs(), f.valOp)
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, b), Accept, ReasonOK)
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, b), Ignore, ReasonReplay)
	// Same seq re-signed with other numbers is still a replay.
	o := f.obs()
	o.Seq = f.seq - 1
	o.Price = 7
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, o, f.valOp)), Ignore, ReasonReplay)

	o = f.obs()
	o.TimeMs = f.now.Add(-time.Hour).UnixMilli()
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, o, f.valOp)), Ignore, ReasonStale)

	o = f.obs()
	o.ProviderMachine = f.node.machine()
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, o, f.valOp)), Ignore, ReasonUnregistered)

	f.set.err = errors.New("chain down")
	wantVerdict(t, f.v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), f.valOp)), Ignore, ReasonUnavailable)

	v, _ := newTestValidator(f.now)
	wantVerdict(t, v.ValidatePriceObs(tctx, testRelay, f.signed(t, f.obs(), f.valOp)), Ignore, ReasonNoValidatorSet)
}

func FuzzValidatePriceObs(f *testing.F) {
	fx := newObsFixture(f)
	f.Add(fx.signed(f, fx.obs(), fx.valOp))
	f.Add(fx.signed(f, fx.obs(), newAccountKey(f)))
	f.Add(fx.node.seal(f, KindHeartbeat, fx.node.heartbeat(fx.now)))
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := newTestValidator(fx.now)
		v.SetValidatorSet(fx.set)
		r := v.ValidatePriceObs(tctx, testRelay, data)
		wantOwnFault(t, r)
		if r.Verdict == Accept {
			o, ok := r.Value.(*VerifiedPriceObs)
			if !ok || o.Check() != nil || o.VerifyObserver() != nil || !fx.set.active[[32]byte(o.Observer)] {
				t.Fatalf("accepted without a valid value: %+v", r.Value)
			}
		} else if r.Err == nil {
			t.Fatalf("%s without an error", r.Verdict)
		}
	})
}

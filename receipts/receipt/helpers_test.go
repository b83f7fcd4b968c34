package receipt

import (
	"bytes"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// t0 is a fixed instant so validity checks do not depend on the wall clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var backends = []hwkey.Backend{hwkey.BackendSoftware, hwkey.BackendTPMSim}

// provider is one machine with a live session.
type provider struct {
	id   *identity.Identity
	sess *identity.Session
}

func newProvider(t testing.TB, b hwkey.Backend) provider {
	t.Helper()
	id := identitytest.OpenBackend(t, b)
	peerKey, _ := identitytest.PeerKey(t)
	return provider{id: id, sess: identitytest.Session(t, id, peerKey, t0, t0.Add(time.Hour))}
}

func (p provider) machine() identity.MachineID { return p.id.MachineID() }

var (
	testModel    = bytes.Repeat([]byte{0x4d}, 32)
	testNonce    = []byte("0123456789abcdef")
	testMessages = []terms.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	testSampling = terms.Sampling{Temperature: 0.7, TopP: 0.9, TopK: 40, Seed: 7, MaxTokens: 64, Stop: []string{"\n\n"}}
	testOutput   = "Hello there."
)

// newReceipt returns a valid receipt for p over the test request.
func newReceipt(t testing.TB, p provider) *Receipt {
	t.Helper()
	sp, err := NewSamplingParams(testSampling)
	if err != nil {
		t.Fatal(err)
	}
	in := InputCommitment(testModel, true, testMessages, "", "", testSampling)
	out := OutputHash(testOutput)
	m := p.machine()
	return &Receipt{
		ModelID: testModel, Engine: "embedded", MachineID: m[:], ProviderPeer: bytes.Clone(p.sess.Cert.PeerID),
		Nonce: testNonce, InputCommitment: in[:], OutputHash: out[:],
		Units:    terms.Units{InputTokens: 12, OutputTokens: 4},
		Sampling: sp, CommitmentHash: bytes.Repeat([]byte{0xcc}, 32), FinishReason: inference.FinishStop,
		TimeMs: t0.Add(time.Minute).UnixMilli(),
	}
}

// observed returns what a gateway saw of the test request served by p.
func observed(p provider) Observed {
	return Observed{
		Nonce: testNonce, ModelID: testModel, MachineID: p.machine(),
		InputCommitment: InputCommitment(testModel, true, testMessages, "", "", testSampling),
		OutputText:      testOutput, BytesSent: 400, BytesReceived: 300, MaxTokens: 64,
		ExactOutputTokens: -1, ExactInputTokens: -1,
	}
}

func sign(t testing.TB, p provider, r *Receipt) []byte {
	t.Helper()
	b, err := Sign(p.sess, r)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return b
}

// sealRaw seals an arbitrary payload with p's session, bypassing Sign's checks.
func sealRaw(t testing.TB, p provider, domain, payloadType string, payload []byte) []byte {
	t.Helper()
	return identitytest.Seal(t, p.sess, domain, payloadType, payload)
}

func (p provider) machineBytes() []byte {
	m := p.machine()
	return m[:]
}

func pricingCard() terms.RateCard {
	return terms.RateCard{InputTokens: 3, OutputTokens: 7, CachedTokens: 1, Minimum: 10}
}

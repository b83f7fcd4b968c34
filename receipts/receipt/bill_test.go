package receipt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// goldenPayment is the digest of testPayment. It changes only if the
// record's encoding changes.
const goldenPayment = "a98decd3a94d15dcce171e27ea4c5dc2f974c0d3236f7cb33a9216cfd201ca6c"

// testPeer is a fixed Ed25519 identity peer ID.
const testPeer = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"

func testPayment(t testing.TB) *Bill {
	t.Helper()
	pid, err := peer.Decode(testPeer)
	if err != nil {
		t.Fatal(err)
	}
	in := InputCommitment(testModel, true, testMessages, "", "", testSampling)
	req := RequestDigest(testNonce, in, testModel)
	u := terms.Units{InputTokens: 12, OutputTokens: 4, CachedTokens: 2}
	b, err := pricing.Price(pricingCard(), u, "receipt", pricing.Surcharges{Receipt: 5})
	if err != nil {
		t.Fatal(err)
	}
	return &Bill{
		RequestDigest: req[:], QuoteDigest: bytes.Repeat([]byte{0x51}, 32), Payer: "buyer-1",
		ProviderPeer: []byte(pid), MachineID: bytes.Repeat([]byte{0x3a}, 32), ReceiptHash: bytes.Repeat([]byte{0x7e}, 32),
		Units: u, Breakdown: b, Price: b.Total, TimeMs: 1772366400000,
	}
}

func TestPaymentDigestStableAndSensitive(t *testing.T) {
	p := testPayment(t)
	d := p.Digest()
	if got := hex.EncodeToString(d[:]); got != goldenPayment {
		t.Fatalf("digest of the test record changed: %s", got)
	}
	if p.Price != 12*3+4*7+2*1+5 {
		t.Fatalf("test record price %d", p.Price)
	}
	enc, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalBill(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) || back.Digest() != d {
		t.Fatalf("round trip changed the record: %+v", back)
	}

	edits := map[string]func(*Bill){
		"request digest": func(p *Bill) { p.RequestDigest[0] ^= 1 },
		"quote digest":   func(p *Bill) { p.QuoteDigest[31] ^= 1 },
		"payer":          func(p *Bill) { p.Payer = "buyer-2" },
		"provider":       func(p *Bill) { p.ProviderPeer[len(p.ProviderPeer)-1] ^= 1 },
		"machine":        func(p *Bill) { p.MachineID[0] ^= 1 },
		"receipt hash":   func(p *Bill) { p.ReceiptHash[0] ^= 1 },
		"units":          func(p *Bill) { p.Units.OutputTokens++ },
		"breakdown":      func(p *Bill) { p.Breakdown.Surcharge++ },
		"price":          func(p *Bill) { p.Price++ },
		"time":           func(p *Bill) { p.TimeMs++ },
	}
	for name, edit := range edits {
		q := testPayment(t)
		edit(q)
		if q.Digest() == d {
			t.Errorf("digest ignores the %s", name)
		}
	}
	// Moving bytes between adjacent fields changes the digest.
	q := testPayment(t)
	q.QuoteDigest, q.Payer = q.QuoteDigest[:31], string(q.QuoteDigest[31:])+q.Payer
	if q.Digest() == d {
		t.Error("digest does not separate fields")
	}
}

func TestPaymentCheck(t *testing.T) {
	cases := map[string]func(*Bill){
		"short request digest":  func(p *Bill) { p.RequestDigest = p.RequestDigest[:31] },
		"no quote digest":       func(p *Bill) { p.QuoteDigest = nil },
		"no payer":              func(p *Bill) { p.Payer = "" },
		"payer too long":        func(p *Bill) { p.Payer = string(bytes.Repeat([]byte{'a'}, MaxPayerLen+1)) },
		"payer invalid utf-8":   func(p *Bill) { p.Payer = "\xff" },
		"bad peer":              func(p *Bill) { p.ProviderPeer = []byte{1, 2, 3} },
		"short machine":         func(p *Bill) { p.MachineID = p.MachineID[:8] },
		"no receipt hash":       func(p *Bill) { p.ReceiptHash = nil },
		"negative time":         func(p *Bill) { p.TimeMs = -5 },
		"price above total":     func(p *Bill) { p.Price++ },
		"usage not the sum":     func(p *Bill) { p.Breakdown.Usage++ },
		"base below minimum":    func(p *Bill) { p.Breakdown.Minimum = p.Breakdown.Base + 1 },
		"total not base + sur.": func(p *Bill) { p.Breakdown.Total++; p.Price++ },
		"usage overflows": func(p *Bill) {
			p.Breakdown.InputTokens, p.Breakdown.OutputTokens = 1<<63, 1<<63
		},
		"total overflows": func(p *Bill) {
			p.Breakdown.Surcharge = ^uint64(0)
			p.Breakdown.Total, p.Price = p.Breakdown.Base-1, p.Breakdown.Base-1
		},
	}
	if err := testPayment(t).Check(); err != nil {
		t.Fatalf("valid record: %v", err)
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			p := testPayment(t)
			edit(p)
			if err := p.Check(); !errors.Is(err, ErrInvalidBill) {
				t.Fatalf("Check = %v", err)
			}
			if _, err := p.Marshal(); !errors.Is(err, ErrInvalidBill) {
				t.Fatalf("Marshal = %v", err)
			}
		})
	}
	if _, err := UnmarshalBill([]byte{0xa0}); !errors.Is(err, ErrInvalidBill) {
		t.Fatalf("empty map: %v", err)
	}
}

package pricing

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

var (
	card = terms.RateCard{InputTokens: 2, OutputTokens: 8, CachedTokens: 1, PixelSteps: 50, AudioMs: 3, Minimum: 1000}
	sur  = Surcharges{None: 0, Receipt: 10, Optimistic: 200, TEE: 500}
)

func TestPriceSumsEveryDimension(t *testing.T) {
	u := Units{InputTokens: 1000, OutputTokens: 500, CachedTokens: 300, PixelSteps: 2, AudioMs: 10}
	b, err := Price(card, u, terms.VerifyOptimistic, sur)
	if err != nil {
		t.Fatal(err)
	}
	want := Breakdown{InputTokens: 2000, OutputTokens: 4000, CachedTokens: 300, PixelSteps: 100, AudioMs: 30,
		Usage: 6430, Minimum: 1000, Base: 6430, Surcharge: 200, Total: 6630}
	if b != want {
		t.Fatalf("breakdown %+v\nwant      %+v", b, want)
	}
	if b.MinimumApplied() {
		t.Fatal("minimum reported as applied")
	}
}

func TestMinimumAndSurcharge(t *testing.T) {
	for level, s := range map[terms.Verification]uint64{
		terms.VerifyNone: 0, terms.VerifyReceipt: 10, terms.VerifyOptimistic: 200, terms.VerifyTEE: 500,
	} {
		b, err := Price(card, Units{InputTokens: 10}, level, sur)
		if err != nil {
			t.Fatal(err)
		}
		if b.Usage != 20 || b.Base != 1000 || !b.MinimumApplied() || b.Surcharge != s || b.Total != 1000+s {
			t.Fatalf("%s: %+v", level, b)
		}
	}
	b, err := Price(card, Units{}, terms.VerifyNone, sur)
	if err != nil || b.Total != card.Minimum {
		t.Fatalf("empty request: %+v %v", b, err)
	}
	// Exactly at the minimum: usage sets the base, the minimum is not "applied".
	b, _ = Price(card, Units{InputTokens: 500}, terms.VerifyNone, sur)
	if b.Base != 1000 || b.MinimumApplied() {
		t.Fatalf("at the minimum: %+v", b)
	}
	if _, err := Price(card, Units{}, "gold", sur); !errors.Is(err, ErrUnknownLevel) {
		t.Fatalf("unknown level: %v", err)
	}
}

func TestOverflowIsAnError(t *testing.T) {
	const max = math.MaxUint64
	cases := map[string]struct {
		card  terms.RateCard
		units Units
		sur   Surcharges
	}{
		"product":              {terms.RateCard{OutputTokens: 1 << 32}, Units{OutputTokens: 1 << 32}, Surcharges{}},
		"product of max":       {terms.RateCard{AudioMs: max}, Units{AudioMs: 2}, Surcharges{}},
		"sum of dimensions":    {terms.RateCard{InputTokens: 1, OutputTokens: 1}, Units{InputTokens: max, OutputTokens: 1}, Surcharges{}},
		"base plus surcharge":  {terms.RateCard{Minimum: max}, Units{}, Surcharges{TEE: 1}},
		"usage plus surcharge": {terms.RateCard{PixelSteps: 1}, Units{PixelSteps: max - 4}, Surcharges{TEE: 5}},
	}
	for name, c := range cases {
		if b, err := Price(c.card, c.units, terms.VerifyTEE, c.sur); !errors.Is(err, ErrOverflow) {
			t.Errorf("%s: %+v, %v; want ErrOverflow", name, b, err)
		}
	}
	// Right at the edge is fine.
	b, err := Price(terms.RateCard{PixelSteps: 1}, Units{PixelSteps: max - 5}, terms.VerifyTEE, Surcharges{TEE: 5})
	if err != nil || b.Total != max {
		t.Fatalf("edge: %+v %v", b, err)
	}
	b, err = Price(terms.RateCard{OutputTokens: 1 << 32}, Units{OutputTokens: 1<<32 - 1}, terms.VerifyNone, Surcharges{})
	if err != nil || b.Total != (1<<32)*(1<<32-1) {
		t.Fatalf("large product: %+v %v", b, err)
	}
}

func testQuote(t *testing.T) Quote {
	t.Helper()
	model := [32]byte{0xAA, 1}
	q, err := NewQuote(peer.ID("provider-1"), identity.MachineID{0x42}, model, card,
		Units{InputTokens: 100, OutputTokens: 256}, terms.VerifyReceipt, sur,
		time.Unix(1_800_000_000, 123_456_789), Digest{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// goldenQuoteDigest pins the digest's encoding: a change here changes every
// payment record's binding and must be deliberate.
const goldenQuoteDigest = "3b16be50f1028ce4b22e04db9a091595ac2f28e3c6c426375d3082737310c3b7"

func TestQuoteDigestStable(t *testing.T) {
	q := testQuote(t)
	if q.Expiry != time.UnixMilli(1_800_000_000_123) {
		t.Fatalf("expiry not truncated to ms: %v", q.Expiry)
	}
	for i := 0; i < 3; i++ {
		d, err := testQuote(t).ComputeDigest()
		if err != nil || d != q.Digest {
			t.Fatalf("digest not stable: %s vs %s (%v)", d, q.Digest, err)
		}
	}
	if got := q.Digest.String(); got != goldenQuoteDigest {
		t.Fatalf("digest %s, want golden %s", got, goldenQuoteDigest)
	}
	enc, err := q.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// The bytes are canonical: they decode and re-encode to themselves.
	var w quoteWire
	if err := cborx.UnmarshalCanonical(enc, len(enc), &w); err != nil || w.Domain != QuoteDomain {
		t.Fatalf("encoding not canonical: %v %+v", err, w)
	}
	if err := q.Verify(time.Unix(1_700_000_000, 0)); err != nil {
		t.Fatalf("verify: %v", err)
	}
	js, err := json.Marshal(q)
	if err != nil || !bytes.Contains(js, []byte(`"digest":"`+q.Digest.String()+`"`)) {
		t.Fatalf("json %s %v", js, err)
	}
}

func TestQuoteDigestSensitivity(t *testing.T) {
	base := testQuote(t)
	mutations := map[string]func(q *Quote){
		"provider":   func(q *Quote) { q.Provider = "provider-2" },
		"machine":    func(q *Quote) { q.Machine[31] ^= 1 },
		"model":      func(q *Quote) { q.Model[31] ^= 1 },
		"units":      func(q *Quote) { q.Units.OutputTokens++ },
		"cached":     func(q *Quote) { q.Units.CachedTokens = 1 },
		"level":      func(q *Quote) { q.Level = terms.VerifyTEE },
		"total":      func(q *Quote) { q.Breakdown.Total++ },
		"surcharge":  func(q *Quote) { q.Breakdown.Surcharge++ },
		"expiry":     func(q *Quote) { q.Expiry = q.Expiry.Add(time.Millisecond) },
		"split rule": func(q *Quote) { q.SplitRule = Digest{0x70, 0x30} },
	}
	seen := map[Digest]string{base.Digest: "base"}
	for name, mut := range mutations {
		q := base
		mut(&q)
		d, err := q.ComputeDigest()
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[d]; dup {
			t.Errorf("%s: digest equals %s's", name, prev)
		}
		seen[d] = name
		if err := q.Verify(time.Unix(1_700_000_000, 0)); !errors.Is(err, ErrQuote) {
			t.Errorf("%s: tampered quote verifies: %v", name, err)
		}
	}
	// Sub-millisecond expiry differences are below the digest's precision.
	q := base
	q.Expiry = q.Expiry.Add(time.Microsecond)
	if d, _ := q.ComputeDigest(); d != base.Digest {
		t.Fatal("sub-millisecond expiry changed the digest")
	}
}

func TestQuoteErrors(t *testing.T) {
	exp := time.Unix(1_800_000_000, 0)
	if _, err := NewQuote("", identity.MachineID{}, [32]byte{}, card, Units{}, terms.VerifyNone, sur, exp, Digest{}); !errors.Is(err, ErrQuote) {
		t.Fatalf("empty provider: %v", err)
	}
	if _, err := NewQuote("p", identity.MachineID{}, [32]byte{}, card, Units{}, terms.VerifyNone, sur, time.Time{}, Digest{}); !errors.Is(err, ErrQuote) {
		t.Fatalf("no expiry: %v", err)
	}
	if _, err := NewQuote("p", identity.MachineID{}, [32]byte{}, terms.RateCard{InputTokens: math.MaxUint64},
		Units{InputTokens: 2}, terms.VerifyNone, sur, exp, Digest{}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	q := testQuote(t)
	if err := q.Verify(q.Expiry); !errors.Is(err, ErrQuote) {
		t.Fatalf("expired quote verifies: %v", err)
	}
	if _, err := hex.DecodeString(q.Digest.String()); err != nil {
		t.Fatal(err)
	}
}

func FuzzPrice(f *testing.F) {
	f.Add(uint64(2), uint64(8), uint64(1), uint64(50), uint64(3), uint64(1000),
		uint64(1000), uint64(500), uint64(300), uint64(2), uint64(10), uint64(200), uint8(2))
	f.Add(uint64(math.MaxUint64), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0),
		uint64(2), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint8(0))
	f.Add(uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(math.MaxUint64),
		uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(1), uint8(3))
	levels := []terms.Verification{terms.VerifyNone, terms.VerifyReceipt, terms.VerifyOptimistic, terms.VerifyTEE, "bogus"}
	f.Fuzz(func(t *testing.T, pi, po, pc, pp, pa, min, ui, uo, uc, up, ua, s uint64, lvl uint8) {
		c := terms.RateCard{InputTokens: pi, OutputTokens: po, CachedTokens: pc, PixelSteps: pp, AudioMs: pa, Minimum: min}
		u := Units{InputTokens: ui, OutputTokens: uo, CachedTokens: uc, PixelSteps: up, AudioMs: ua}
		level := levels[int(lvl)%len(levels)]
		sc := Surcharges{None: s, Receipt: s, Optimistic: s, TEE: s}
		b, err := Price(c, u, level, sc)
		if err != nil {
			if !errors.Is(err, ErrOverflow) && !errors.Is(err, ErrUnknownLevel) {
				t.Fatalf("unexpected error %v", err)
			}
			if level != "bogus" && errors.Is(err, ErrUnknownLevel) {
				t.Fatalf("valid level %q refused", level)
			}
			return
		}
		if b.Total < c.Minimum || b.Total < b.Usage || b.Total-b.Base != s || b.Base != max(c.Minimum, b.Usage) {
			t.Fatalf("inconsistent breakdown %+v for %+v %+v", b, c, u)
		}
		// Cross-check the sum with 128-bit arithmetic done another way.
		var hiSum, loSum uint64
		for _, p := range [][2]uint64{{pi, ui}, {po, uo}, {pc, uc}, {pp, up}, {pa, ua}} {
			hi, lo := mulFull(p[0], p[1])
			var carry uint64
			loSum, carry = addFull(loSum, lo)
			hiSum += hi + carry
		}
		if hiSum != 0 || loSum != b.Usage {
			t.Fatalf("usage %d, 128-bit sum %d:%d", b.Usage, hiSum, loSum)
		}
	})
}

func mulFull(a, b uint64) (hi, lo uint64) {
	const mask = 1<<32 - 1
	a0, a1, b0, b1 := a&mask, a>>32, b&mask, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask, t>>32
	w1 += a0 * b1
	return a1*b1 + w2 + w1>>32, a * b
}

func addFull(a, b uint64) (uint64, uint64) {
	s := a + b
	if s < a {
		return s, 1
	}
	return s, 0
}

// TestPriceExpertTokens: a MoE call's remote expert-tokens are a unit of
// the serving provider's card like any other, summed into the usage the
// minimum is compared with, and overflow like the others.
func TestPriceExpertTokens(t *testing.T) {
	c := card
	c.ExpertTokens = 3
	u := Units{InputTokens: 10, OutputTokens: 5, ExpertTokens: 400}
	b, err := Price(c, u, terms.VerifyReceipt, sur)
	if err != nil {
		t.Fatal(err)
	}
	want := Breakdown{InputTokens: 20, OutputTokens: 40, ExpertTokens: 1200, Usage: 1260, Minimum: 1000, Base: 1260, Surcharge: 10, Total: 1270}
	if b != want {
		t.Fatalf("breakdown %+v\nwant      %+v", b, want)
	}
	// A card without the unit bills none of it.
	if b, err := Price(card, u, terms.VerifyNone, sur); err != nil || b.ExpertTokens != 0 || b.Usage != 60 {
		t.Fatalf("card without expert_tokens: %+v %v", b, err)
	}
	c.ExpertTokens = math.MaxUint64
	if _, err := Price(c, Units{ExpertTokens: 2}, terms.VerifyNone, sur); !errors.Is(err, ErrOverflow) {
		t.Fatalf("expert-token overflow: %v", err)
	}
	// A quote binds the expert-tokens it priced.
	c.ExpertTokens = 3
	quote := func(n uint64) Digest {
		q, err := NewQuote(peer.ID("p"), identity.MachineID{}, [32]byte{}, c, Units{ExpertTokens: n}, terms.VerifyNone, sur, time.Unix(1, 0), Digest{})
		if err != nil {
			t.Fatal(err)
		}
		return q.Digest
	}
	if quote(1) == quote(2) {
		t.Fatal("quote digest does not bind expert-tokens")
	}
}

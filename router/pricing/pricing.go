package pricing

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Errors Price returns, wrapped.
var (
	ErrOverflow     = errors.New("pricing: overflow")
	ErrUnknownLevel = errors.New("pricing: unknown verification level")
)

// Units are what one request consumes, per billed dimension (defined with
// the receipts that commit to them).
type Units = terms.Units

// Surcharges are the governed flat surcharges, in micro-units per call, of
// each verification level. The chain's surcharge_* params govern them (the
// same unit); a node without a chain uses its [router.surcharges].
type Surcharges struct {
	None       uint64 `cbor:"1,keyasint" json:"none" toml:"none"`
	Receipt    uint64 `cbor:"2,keyasint" json:"receipt" toml:"receipt"`
	Optimistic uint64 `cbor:"3,keyasint" json:"optimistic" toml:"optimistic"`
	TEE        uint64 `cbor:"4,keyasint" json:"tee" toml:"tee"`
}

// For returns the surcharge of level, one of terms.Levels.
func (s Surcharges) For(level terms.Verification) (uint64, error) {
	switch level {
	case terms.VerifyNone:
		return s.None, nil
	case terms.VerifyReceipt:
		return s.Receipt, nil
	case terms.VerifyOptimistic:
		return s.Optimistic, nil
	case terms.VerifyTEE:
		return s.TEE, nil
	default:
		return 0, fmt.Errorf("%w: %q", ErrUnknownLevel, level)
	}
}

// Breakdown is a priced request, in micro-units (defined with the payment
// records that carry it).
type Breakdown = terms.Breakdown

// Price prices units on card at verification level:
//
//	total = max(card.Minimum, Σ units × unit price) + surcharge(level)
//
// in checked uint64 arithmetic: any product or sum that would exceed
// 2^64-1 micro-units is an ErrOverflow, never a wrapped value.
func Price(card terms.RateCard, u Units, level terms.Verification, s Surcharges) (Breakdown, error) {
	sur, err := s.For(level)
	if err != nil {
		return Breakdown{}, err
	}
	var b Breakdown
	dims := []struct {
		name        string
		units, unit uint64
		out         *uint64
	}{
		{"input_tokens", u.InputTokens, card.InputTokens, &b.InputTokens},
		{"output_tokens", u.OutputTokens, card.OutputTokens, &b.OutputTokens},
		{"cached_tokens", u.CachedTokens, card.CachedTokens, &b.CachedTokens},
		{"pixel_steps", u.PixelSteps, card.PixelSteps, &b.PixelSteps},
		{"audio_ms", u.AudioMs, card.AudioMs, &b.AudioMs},
		{"expert_tokens", u.ExpertTokens, card.ExpertTokens, &b.ExpertTokens},
	}
	for _, d := range dims {
		if *d.out, err = mul(d.units, d.unit); err != nil {
			return Breakdown{}, fmt.Errorf("%w: %s: %d units × %d", err, d.name, d.units, d.unit)
		}
		if b.Usage, err = add(b.Usage, *d.out); err != nil {
			return Breakdown{}, fmt.Errorf("%w: usage sum at %s", err, d.name)
		}
	}
	b.Minimum = card.Minimum
	b.Base = max(b.Minimum, b.Usage)
	b.Surcharge = sur
	if b.Total, err = add(b.Base, sur); err != nil {
		return Breakdown{}, fmt.Errorf("%w: base %d + %s surcharge %d", err, b.Base, level, sur)
	}
	return b, nil
}

func mul(a, b uint64) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 0, ErrOverflow
	}
	return lo, nil
}

func add(a, b uint64) (uint64, error) {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return 0, ErrOverflow
	}
	return sum, nil
}

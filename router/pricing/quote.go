package pricing

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// QuoteDomain is the first field of every digested quote, so a quote
// digest cannot collide with the digest of another kind of payload.
const QuoteDomain = "tenzro/v1/quote"

// ErrQuote reports a quote that cannot be built or does not match its
// digest.
var ErrQuote = errors.New("pricing: bad quote")

// Digest is the SHA-256 of a quote's deterministic CBOR.
type Digest [32]byte

// String returns the digest as 64 lowercase hex digits.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// MarshalText encodes the digest as hex (for JSON).
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Quote is one provider's price for one request, as tenzro_quoteInference
// returns it and as a payment record binds it (through Digest).
type Quote struct {
	Provider  peer.ID            `json:"provider"`
	Machine   identity.MachineID `json:"machine_id"`
	Model     [32]byte           `json:"-"`
	Units     Units              `json:"units"`
	Level     terms.Verification `json:"verification"`
	Breakdown Breakdown          `json:"breakdown"`
	Expiry    time.Time          `json:"expires"`
	// SplitRule optionally names the settlement split rule the quote is
	// offered under: the hash of the plan legs (consensus/ledger
	// SplitRuleHash); a settlement plan citing this quote must use exactly
	// that rule. Zero names none.
	SplitRule Digest `json:"split_rule,omitzero"`
	// Digest is ComputeDigest's result when the quote was made.
	Digest Digest `json:"digest"`
}

// NewQuote prices units on card and returns the quote with its digest.
// Expiry is truncated to the millisecond, the precision the digest covers.
func NewQuote(provider peer.ID, machine identity.MachineID, model [32]byte, card terms.RateCard,
	u Units, level terms.Verification, s Surcharges, expiry time.Time, splitRule Digest) (Quote, error) {
	if provider == "" {
		return Quote{}, fmt.Errorf("%w: empty provider", ErrQuote)
	}
	if expiry.IsZero() {
		return Quote{}, fmt.Errorf("%w: no expiry", ErrQuote)
	}
	b, err := Price(card, u, level, s)
	if err != nil {
		return Quote{}, fmt.Errorf("pricing: quote for %s: %w", provider, err)
	}
	q := Quote{Provider: provider, Machine: machine, Model: model, Units: u, Level: level,
		Breakdown: b, Expiry: time.UnixMilli(expiry.UnixMilli()), SplitRule: splitRule}
	if q.Digest, err = q.ComputeDigest(); err != nil {
		return Quote{}, err
	}
	return q, nil
}

// quoteWire is the digested encoding: integer keys, byte strings for IDs,
// the expiry in Unix milliseconds.
type quoteWire struct {
	Domain    string             `cbor:"1,keyasint"`
	Provider  []byte             `cbor:"2,keyasint"`
	Machine   []byte             `cbor:"3,keyasint"`
	Model     []byte             `cbor:"4,keyasint"`
	Units     Units              `cbor:"5,keyasint"`
	Level     terms.Verification `cbor:"6,keyasint"`
	Breakdown Breakdown          `cbor:"7,keyasint"`
	ExpiryMs  int64              `cbor:"8,keyasint"`
	SplitRule []byte             `cbor:"9,keyasint,omitempty"` // 32 bytes, or absent when the quote names no rule
}

// Encode returns the quote's deterministic CBOR (Core Deterministic
// Encoding via cborx), the bytes its digest covers. The Digest field
// itself is not part of them.
func (q Quote) Encode() ([]byte, error) {
	w := quoteWire{Domain: QuoteDomain, Provider: []byte(q.Provider), Machine: q.Machine[:],
		Model: q.Model[:], Units: q.Units, Level: q.Level, Breakdown: q.Breakdown,
		ExpiryMs: q.Expiry.UnixMilli()}
	if q.SplitRule != (Digest{}) {
		w.SplitRule = q.SplitRule[:]
	}
	b, err := cborx.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("pricing: encode quote: %w", err)
	}
	return b, nil
}

// ComputeDigest returns SHA-256 over Encode.
func (q Quote) ComputeDigest() (Digest, error) {
	b, err := q.Encode()
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(b), nil
}

// Verify checks that the Digest field matches the quote's contents and
// that the quote has not expired at now.
func (q Quote) Verify(now time.Time) error {
	d, err := q.ComputeDigest()
	if err != nil {
		return err
	}
	if d != q.Digest {
		return fmt.Errorf("%w: digest %s does not match contents (%s)", ErrQuote, q.Digest, d)
	}
	if !now.Before(q.Expiry) {
		return fmt.Errorf("%w: expired at %s", ErrQuote, q.Expiry.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

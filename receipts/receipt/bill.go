package receipt

import (
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const (
	// BillDomain prefixes the bytes a bill digest covers (its value predates
	// the name and is kept so existing digests still match).
	BillDomain = "tenzro/v1/payment"
	// MaxPayerLen bounds Bill.Payer.
	MaxPayerLen = 128
	// MaxBillSize bounds an encoded bill.
	MaxBillSize = 2 << 10
)

// ErrInvalidBill reports a bill with a missing or malformed
// field, or figures that do not add up.
var ErrInvalidBill = errors.New("receipt: invalid bill")

// Bill is the gateway's own account of what it billed for one request:
// the units it capped, the breakdown it priced and the payer it charged.
// receipts/store keeps it off chain; the chain settles a PaymentRecord.
type Bill struct {
	RequestDigest []byte          `cbor:"1,keyasint" json:"request_digest"` // RequestDigest (32)
	QuoteDigest   []byte          `cbor:"2,keyasint" json:"quote_digest"`   // the quote's digest (32; router/pricing)
	Payer         string          `cbor:"3,keyasint" json:"payer"`          // buyer account at this node
	ProviderPeer  []byte          `cbor:"4,keyasint" json:"provider_peer"`  // libp2p peer ID bytes
	MachineID     []byte          `cbor:"5,keyasint" json:"machine_id"`     // 32
	ReceiptHash   []byte          `cbor:"6,keyasint" json:"receipt_hash"`   // ReceiptHash of the envelope (32)
	Units         terms.Units     `cbor:"7,keyasint" json:"units"`          // billed (capped) units
	Breakdown     terms.Breakdown `cbor:"8,keyasint" json:"breakdown"`
	Price         uint64          `cbor:"9,keyasint" json:"price"` // micro-units, == Breakdown.Total
	TimeMs        int64           `cbor:"10,keyasint" json:"time_ms"`
}

// Check validates field sizes and that the breakdown adds up to Price:
// Usage is the sum of the per-dimension figures, Base is max(Minimum,
// Usage) and Total is Base + Surcharge, all without overflow.
func (p *Bill) Check() error {
	for _, f := range []struct {
		name string
		b    []byte
	}{
		{"request_digest", p.RequestDigest}, {"quote_digest", p.QuoteDigest},
		{"machine_id", p.MachineID}, {"receipt_hash", p.ReceiptHash},
	} {
		if len(f.b) != HashSize {
			return fmt.Errorf("%w: %s is %d bytes, want %d", ErrInvalidBill, f.name, len(f.b), HashSize)
		}
	}
	if p.Payer == "" || len(p.Payer) > MaxPayerLen || !utf8.ValidString(p.Payer) {
		return fmt.Errorf("%w: payer must be 1..%d bytes of UTF-8", ErrInvalidBill, MaxPayerLen)
	}
	if err := checkPeer(p.ProviderPeer); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidBill, err)
	}
	if p.TimeMs < 0 {
		return fmt.Errorf("%w: negative time_ms", ErrInvalidBill)
	}
	b := p.Breakdown
	var usage uint64
	for _, v := range b.UsageParts() {
		var carry uint64
		if usage, carry = bits.Add64(usage, v, 0); carry != 0 {
			return fmt.Errorf("%w: breakdown usage overflows", ErrInvalidBill)
		}
	}
	total, carry := bits.Add64(b.Base, b.Surcharge, 0)
	switch {
	case usage != b.Usage:
		return fmt.Errorf("%w: breakdown usage %d is not the sum %d", ErrInvalidBill, b.Usage, usage)
	case b.Base != max(b.Minimum, b.Usage):
		return fmt.Errorf("%w: breakdown base %d is not max(minimum, usage)", ErrInvalidBill, b.Base)
	case carry != 0 || total != b.Total:
		return fmt.Errorf("%w: breakdown total %d is not base + surcharge", ErrInvalidBill, b.Total)
	case p.Price != b.Total:
		return fmt.Errorf("%w: price %d differs from breakdown total %d", ErrInvalidBill, p.Price, b.Total)
	}
	return nil
}

// Marshal checks the record and returns its deterministic CBOR.
func (p *Bill) Marshal() ([]byte, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	b, err := cborx.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("receipt: encode payment record: %w", err)
	}
	return b, nil
}

// UnmarshalBill decodes and checks a bill, accepting only its
// canonical encoding of at most MaxBillSize bytes.
func UnmarshalBill(b []byte) (*Bill, error) {
	return cborx.UnmarshalChecked(b, MaxBillSize, ErrInvalidBill, (*Bill).Check)
}

// Digest is SHA-256 over BillDomain and the bill's deterministic CBOR
// (with Payer as its UTF-8 bytes). It covers every field and does not
// require the record to pass Check.
func (p *Bill) Digest() [32]byte {
	return digest(BillDomain, struct {
		RequestDigest []byte          `cbor:"1,keyasint"`
		QuoteDigest   []byte          `cbor:"2,keyasint"`
		Payer         []byte          `cbor:"3,keyasint"`
		ProviderPeer  []byte          `cbor:"4,keyasint"`
		MachineID     []byte          `cbor:"5,keyasint"`
		ReceiptHash   []byte          `cbor:"6,keyasint"`
		Units         terms.Units     `cbor:"7,keyasint"`
		Breakdown     terms.Breakdown `cbor:"8,keyasint"`
		Price         uint64          `cbor:"9,keyasint"`
		TimeMs        int64           `cbor:"10,keyasint"`
	}{p.RequestDigest, p.QuoteDigest, []byte(p.Payer), p.ProviderPeer, p.MachineID, p.ReceiptHash,
		p.Units, p.Breakdown, p.Price, p.TimeMs})
}

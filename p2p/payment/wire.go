package payment

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// ProtocolID is the libp2p protocol of payment-record delivery.
const ProtocolID = "/tenzro/payment/1.0.0"

// ServiceName is the resource-manager service both ends attach streams to;
// p2p.AddServiceLimits sets its per-peer limits.
const ServiceName = p2p.ServicePayment

// Frame limits.
const (
	// MaxRecords caps the records of one Delivery frame; Deliver splits
	// longer lists.
	MaxRecords = 64
	// MaxRecordBytes bounds one encoded record: its receipt envelope plus
	// 1 KiB for the fixed fields, the signature and the CBOR around them.
	MaxRecordBytes = receipt.MaxReceiptBytes + 1<<10
	// MaxFrameSize caps a Delivery frame.
	MaxFrameSize = MaxRecords * MaxRecordBytes
	// MaxReasonLen caps a Result's reason, in bytes.
	MaxReasonLen = 256
	// MaxAckSize caps an Ack frame: MaxRecords results with full reasons
	// and their CBOR framing fit well within it.
	MaxAckSize = 64 << 10
)

// Result codes share ledger.Code's numbering, so a refusal names the check
// settlement would fail the record on (a Sink's *Refusal code passes
// through unchanged: CodeBadRecordSig, CodeWrongMachine, ...); the
// protocol's own outcomes are numbered from 1000, which no ledger code
// uses.
const (
	// CodeOK: the provider persisted the record.
	CodeOK = uint32(ledger.CodeOK)
	// CodeMalformed: the record fails the stateless checks (price 0, no
	// receipt or one over receipt.MaxReceiptBytes, a receipt not hashing to
	// ReceiptHash, a signature of the wrong size); it can never settle.
	// Permanent.
	CodeMalformed = uint32(ledger.CodeMalformed)
	// CodeRetry: a transient failure (the sink could not persist it now,
	// the exchange timed out, the server is stopping); deliver it again.
	CodeRetry uint32 = 1000
	// CodeWrongNetwork: the delivery named another network than the
	// provider's; every record of the frame gets it. Permanent.
	CodeWrongNetwork uint32 = 1001
	// CodeRefused: the sink refused the record permanently without a code
	// of its own.
	CodeRefused uint32 = 1002
)

// ErrMalformedAck marks an Ack that does not decode, breaks a limit or
// does not answer every record of its delivery exactly once.
var ErrMalformedAck = errors.New("payment: malformed ack")

// ErrMalformedDelivery marks a Delivery frame that does not decode or
// carries no records, or more than MaxRecords.
var ErrMalformedDelivery = errors.New("payment: malformed delivery")

// Delivery is the frame a gateway sends: the payment records it signed
// for calls the provider served, on the gateway's network.
type Delivery struct {
	Network string                  `cbor:"1,keyasint"`
	Records []receipt.PaymentRecord `cbor:"2,keyasint"`
}

// Ack is the provider's answer: exactly one Result per record of the
// Delivery, in order.
type Ack struct {
	Results []Result `cbor:"1,keyasint"`
}

// Result is the outcome of one record. Code 0 means the provider
// persisted it.
type Result struct {
	Code   uint32 `cbor:"1,keyasint,omitempty"`
	Reason string `cbor:"2,keyasint,omitempty"`
}

// OK reports whether the provider persisted the record.
func (r Result) OK() bool { return r.Code == CodeOK }

// Transient reports whether the record should be delivered again later.
func (r Result) Transient() bool { return r.Code == CodeRetry }

// Permanent reports whether the provider will never accept the record:
// the gateway stops delivering it.
func (r Result) Permanent() bool { return !r.OK() && !r.Transient() }

// Acked maps results to whether each record is settled with the provider
// (persisted, or permanently refused): the records the gateway's outbox
// stops delivering.
func Acked(results []Result) []bool {
	out := make([]bool, len(results))
	for i, r := range results {
		out[i] = !r.Transient()
	}
	return out
}

// Refusal is a Sink's permanent refusal of one record: the gateway stops
// delivering it. Code 0 is sent as CodeRefused; CodeRetry makes it
// transient after all.
type Refusal struct {
	Code   uint32
	Reason string
}

// Error implements error.
func (r *Refusal) Error() string {
	return fmt.Sprintf("payment: record refused (code %d): %s", r.Code, r.Reason)
}

// CheckRecord applies the stateless checks every record must pass before
// it is worth persisting or sending: those settlement would fail it on
// whatever the chain state.
func CheckRecord(r *receipt.PaymentRecord) error {
	switch {
	case r.Price == 0:
		return errors.New("payment: record has price 0")
	case len(r.Receipt) == 0:
		return errors.New("payment: record carries no receipt")
	case len(r.Receipt) > receipt.MaxReceiptBytes:
		return fmt.Errorf("payment: receipt is %d bytes, limit %d", len(r.Receipt), receipt.MaxReceiptBytes)
	case len(r.Sig) != ed25519.SignatureSize:
		return fmt.Errorf("payment: signature is %d bytes, want %d", len(r.Sig), ed25519.SignatureSize)
	case sha256.Sum256(r.Receipt) != r.ReceiptHash:
		return errors.New("payment: receipt does not hash to the record's receipt hash")
	}
	return nil
}

// DecodeDelivery strictly decodes a Delivery frame: canonical CBOR of at
// most MaxFrameSize bytes with 1..MaxRecords records. It does not check
// the records (CheckRecord does, per record).
func DecodeDelivery(b []byte) (*Delivery, error) {
	d := new(Delivery)
	if err := cborx.UnmarshalCanonical(b, MaxFrameSize, d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedDelivery, err)
	}
	if n := len(d.Records); n == 0 || n > MaxRecords {
		return nil, fmt.Errorf("%w: %d records, want 1..%d", ErrMalformedDelivery, n, MaxRecords)
	}
	return d, nil
}

// DecodeAck strictly decodes an Ack frame answering want records.
func DecodeAck(b []byte, want int) (*Ack, error) {
	a := new(Ack)
	if err := cborx.UnmarshalCanonical(b, MaxAckSize, a); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedAck, err)
	}
	if len(a.Results) != want {
		return nil, fmt.Errorf("%w: %d results for %d records", ErrMalformedAck, len(a.Results), want)
	}
	for i, r := range a.Results {
		if len(r.Reason) > MaxReasonLen || !utf8.ValidString(r.Reason) {
			return nil, fmt.Errorf("%w: result %d: reason longer than %d bytes or not UTF-8", ErrMalformedAck, i, MaxReasonLen)
		}
	}
	return a, nil
}

// encodeDelivery encodes d, refusing frames a server would reset.
func encodeDelivery(d *Delivery) ([]byte, error) {
	if n := len(d.Records); n == 0 || n > MaxRecords {
		return nil, fmt.Errorf("payment: refusing to send %d records in one frame, want 1..%d", n, MaxRecords)
	}
	b, err := cborx.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("payment: encode delivery: %w", err)
	}
	if len(b) > MaxFrameSize {
		return nil, fmt.Errorf("payment: delivery of %d bytes exceeds %d", len(b), MaxFrameSize)
	}
	return b, nil
}

// encodeAck encodes a, which the server built with clipped reasons.
func encodeAck(a *Ack) ([]byte, error) {
	b, err := cborx.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("payment: encode ack: %w", err)
	}
	return b, nil
}

// clip bounds a reason at MaxReasonLen bytes of valid UTF-8.
func clip(s string) string { return p2p.Clip(s, MaxReasonLen) }

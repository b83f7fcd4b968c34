package ledger

import (
	"crypto/sha256"
	"math/bits"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// StreamIDDomain starts the bytes a stream ID hashes.
const StreamIDDomain = "tenzro/v1/stream"

// SecondsPerHour is the divisor of a stream's hourly rate.
const SecondsPerHour = 3600

// Stream is a stream escrow: Deposit moved out of the spend escrow of
// (Payer, Settler) that accrues to the operator of machine Payee at Rate
// micro-units per hour of block time from OpenTime. Operator is the
// payee's operator when the stream opened: it alone claims, and it is
// paid even if the machine's registration later goes away.
//
// Deposit = Claimed + Refunded + Balance() always; Refunded is non-zero
// only once Closed.
type Stream struct {
	ID          terms.Hash32       `cbor:"1,keyasint" json:"id"`
	Payer       terms.AccountID    `cbor:"2,keyasint" json:"payer"`
	Settler     terms.AccountID    `cbor:"3,keyasint" json:"settler"`
	Payee       identity.MachineID `cbor:"4,keyasint" json:"payee"`
	Operator    terms.AccountID    `cbor:"5,keyasint" json:"operator"`
	Rate        uint64             `cbor:"6,keyasint" json:"rate"` // micro-units per hour
	Deposit     uint64             `cbor:"7,keyasint" json:"deposit"`
	Claimed     uint64             `cbor:"8,keyasint" json:"claimed"`
	Refunded    uint64             `cbor:"9,keyasint" json:"refunded"`
	OpenTime    int64              `cbor:"10,keyasint" json:"open_time"` // unix seconds (block time)
	OpenHeight  int64              `cbor:"11,keyasint" json:"open_height"`
	Closed      bool               `cbor:"12,keyasint" json:"closed"`
	CloseTime   int64              `cbor:"13,keyasint,omitempty" json:"close_time,omitempty"`
	CloseHeight int64              `cbor:"14,keyasint,omitempty" json:"close_height,omitempty"`
}

// Balance is what the stream still holds: deposit − claimed − refunded.
// Execution keeps claimed + refunded ≤ deposit; a stored stream breaking
// that reads as empty rather than wrapping around.
func (s Stream) Balance() uint64 {
	out, used := s.Deposit, s.Claimed+s.Refunded
	if used < s.Claimed || used > out {
		return 0
	}
	return out - used
}

// Accrued is what the stream owes its payee at block time t in total,
// claimed or not: min(deposit, ⌊rate × (t − t_open) / 3600⌋). It is
// computed from OpenTime every time (never added up claim by claim), so
// rounding never drifts, and the floor keeps every fraction with the
// payer. A closed stream accrues nothing after CloseTime.
func (s Stream) Accrued(t int64) uint64 {
	if s.Closed && t > s.CloseTime {
		t = s.CloseTime
	}
	return StreamAccrual(s.Rate, s.Deposit, s.OpenTime, t)
}

// StreamAccrual is min(deposit, ⌊rate × (t − open) / 3600⌋), 0 for t ≤ open,
// with a 128-bit product so no rate or span overflows.
func StreamAccrual(rate, deposit uint64, open, t int64) uint64 {
	if t <= open {
		return 0
	}
	elapsed := nonNeg(t - open)
	hi, lo := bits.Mul64(rate, elapsed)
	if hi >= SecondsPerHour {
		return deposit // the quotient would not fit in 64 bits: beyond any deposit
	}
	q, _ := bits.Div64(hi, lo, SecondsPerHour)
	return min(q, deposit)
}

// StreamID is the ID of the stream opened by the transaction of signer at
// nonce: SHA-256(StreamIDDomain ‖ signer ‖ nonce ‖ payer ‖ settler ‖
// payee). A signer's nonce is used once, so IDs are unique; the open
// height is left out so the opener knows the ID when it signs.
func StreamID(signer terms.AccountID, nonce uint64, payer, settler terms.AccountID, payee identity.MachineID) terms.Hash32 {
	return sha256.Sum256(cat(StreamIDDomain, signer[:], u64(nonce), payer[:], settler[:], payee[:]))
}

// KeyStream is the state key of a stream: "u/" ‖ ID.
func KeyStream(id terms.Hash32) []byte { return cat("u/", id[:]) }

// KeyStreamIndex is the state key of an open stream's entry in its payer's
// index: "w/" ‖ payer ‖ ID, holding nothing but a marker. It is removed
// when the stream closes, so the index lists the payer's open streams.
func KeyStreamIndex(payer terms.AccountID, id terms.Hash32) []byte { return cat("w/", payer[:], id[:]) }

// StreamIndexPrefix is the key prefix of payer's open-stream index.
func StreamIndexPrefix(payer terms.AccountID) []byte { return cat("w/", payer[:]) }

// StreamIDOfIndexKey returns the stream ID an index key names.
func StreamIDOfIndexKey(key []byte) (terms.Hash32, bool) {
	var id terms.Hash32
	if len(key) != 2+32+32 {
		return id, false
	}
	copy(id[:], key[34:])
	return id, true
}

package ledger

import (
	"crypto/sha256"
	"fmt"

	"github.com/fxamacker/cbor/v2"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Plan domains.
const (
	PlanIDDomain    = "tenzro/v1/plan"
	SplitRuleDomain = "tenzro/v1/split-rule"
	// QuoteDomain is the domain field of a router quote's encoding
	// (router/pricing.QuoteDomain), checked when a plan carries one.
	QuoteDomain = "tenzro/v1/quote"
)

// The keys of a quote's encoding the ledger reads (router/pricing
// quoteWire): its domain and the split rule it names. The ledger reads
// only these, so the rest of the quote's layout stays the router's.
const (
	quoteKeyDomain    = 1
	quoteKeySplitRule = 9
)

// PlanStatus is where a plan stands.
type PlanStatus uint8

// Plan statuses.
const (
	PlanOpenStatus PlanStatus = 1 // waiting for its decision
	PlanCommitted  PlanStatus = 2 // every leg paid
	PlanAborted    PlanStatus = 3 // total back in the escrow
)

// String names the status.
func (s PlanStatus) String() string {
	if n, ok := enumName(uint8(s), "", "open", "committed", "aborted"); ok {
		return n
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// MarshalText names the status in JSON.
func (s PlanStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a status name.
func (s *PlanStatus) UnmarshalText(b []byte) error {
	for v := PlanOpenStatus; v <= PlanAborted; v++ {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("ledger: plan status %q: want open, committed or aborted", b)
}

// Plan is a settlement plan as stored. Payouts is each leg's share, set
// when the plan opens; they sum to Total exactly.
type Plan struct {
	ID           terms.Hash32    `cbor:"1,keyasint" json:"id"`
	Payer        terms.AccountID `cbor:"2,keyasint" json:"payer"`
	Settler      terms.AccountID `cbor:"3,keyasint" json:"settler"`
	Legs         []PlanLeg       `cbor:"4,keyasint" json:"legs"`
	Payouts      []uint64        `cbor:"5,keyasint" json:"payouts"`
	Total        uint64          `cbor:"6,keyasint" json:"total"`
	SplitRule    terms.Hash32    `cbor:"7,keyasint" json:"split_rule"`
	QuoteDigest  terms.Hash32    `cbor:"8,keyasint,omitempty" json:"quote_digest,omitzero"`
	OpenHeight   int64           `cbor:"9,keyasint" json:"open_height"`
	Deadline     int64           `cbor:"10,keyasint" json:"deadline"` // last height only the settler may decide
	Status       PlanStatus      `cbor:"11,keyasint" json:"status"`
	DecideHeight int64           `cbor:"12,keyasint,omitempty" json:"decide_height,omitempty"`
}

// PlanPayouts splits total by legs' basis points: each leg ⌊total × bps /
// 10000⌋ (a 128-bit product, so no total overflows), the remainder to the
// first leg, so the payouts sum to total exactly. legs must pass
// CheckLegs.
func PlanPayouts(total uint64, legs []PlanLeg) []uint64 {
	out := make([]uint64, len(legs))
	var paid uint64
	for i, l := range legs {
		out[i] = mulDiv(total, l.BPS, BasisPoints)
		paid += out[i] // Σ ⌊total × bps_i / 10000⌋ ≤ total: no overflow
	}
	if paid > total {
		panic("ledger: plan payouts exceed the total")
	}
	out[0] += total - paid
	return out
}

// SplitRuleHash names a split rule: SHA-256(SplitRuleDomain ‖ 0x00 ‖
// canonical CBOR of the legs). A quote names a rule by this hash.
func SplitRuleHash(legs []PlanLeg) terms.Hash32 {
	b, err := cborx.Marshal(legs)
	if err != nil {
		panic(fmt.Sprintf("ledger: encode plan legs: %v", err)) // plain structs always encode
	}
	return sha256.Sum256(cat(SplitRuleDomain+"\x00", b))
}

// PlanID is the ID of the plan opened by signer's transaction at nonce:
// SHA-256(PlanIDDomain ‖ signer ‖ nonce). A nonce is used once.
func PlanID(signer terms.AccountID, nonce uint64) terms.Hash32 {
	return sha256.Sum256(cat(PlanIDDomain, signer[:], u64(nonce)))
}

// QuoteSplitRule reads the split rule a quote's encoding names: its
// domain must be QuoteDomain and it must be canonical CBOR; ok is false
// when the quote names no rule.
func QuoteSplitRule(quote []byte) (rule terms.Hash32, ok bool, err error) {
	var m map[uint64]cbor.RawMessage
	if err := cborx.UnmarshalCanonical(quote, MaxQuoteBytes, &m); err != nil {
		return rule, false, reject(CodeMalformed, "plan quote: %v", err)
	}
	var domain string
	if err := cborx.Unmarshal(m[quoteKeyDomain], MaxQuoteBytes, &domain); err != nil || domain != QuoteDomain {
		return rule, false, reject(CodeMalformed, "plan quote: domain %q, want %q", domain, QuoteDomain)
	}
	raw, named := m[quoteKeySplitRule]
	if !named {
		return rule, false, nil
	}
	var b []byte
	if err := cborx.Unmarshal(raw, MaxQuoteBytes, &b); err != nil || len(b) != len(rule) {
		return rule, false, reject(CodeMalformed, "plan quote: split rule is not a %d-byte hash", len(rule))
	}
	copy(rule[:], b)
	return rule, true, nil
}

// KeyPlan is the state key of a plan: "k/" ‖ ID.
func KeyPlan(id terms.Hash32) []byte { return cat("k/", id[:]) }

// KeyPlanIndex is the state key of an undecided plan's entry in its
// payer's index: "l/" ‖ payer ‖ ID; it goes when the plan is decided.
func KeyPlanIndex(payer terms.AccountID, id terms.Hash32) []byte { return cat("l/", payer[:], id[:]) }

// PlanIndexPrefix is the key prefix of payer's open-plan index.
func PlanIndexPrefix(payer terms.AccountID) []byte { return cat("l/", payer[:]) }

// PlanIDOfIndexKey returns the plan ID an index key names.
func PlanIDOfIndexKey(key []byte) (terms.Hash32, bool) {
	var id terms.Hash32
	if len(key) != 2+32+32 {
		return id, false
	}
	copy(id[:], key[34:])
	return id, true
}

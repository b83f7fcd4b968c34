package ledger

import (
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Plan limits.
const (
	// MaxPlanLegs bounds the legs of one settlement plan.
	MaxPlanLegs = 64
	// MaxQuoteBytes bounds the quote encoding a plan may carry.
	MaxQuoteBytes = 4 << 10
	// MaxPlanTimeoutBlocks bounds how long an undecided plan may hold its
	// escrowed total.
	MaxPlanTimeoutBlocks = 1_000_000
	maxLegChainBytes     = 64
)

// PlanLeg is one payee of a settlement plan and its share in basis points
// of the plan's total. Chain names where the leg's counterpart is settled:
// empty (or this chain's ID) means on this chain; another chain's ID means
// the leg depends on something this chain cannot see (a payment or a
// delivery there), so the plan waits for PlanDecide. Either way the leg's
// share is paid here, to Payee, on commit.
type PlanLeg struct {
	Payee terms.AccountID `cbor:"1,keyasint" json:"payee"`
	BPS   uint64          `cbor:"2,keyasint" json:"bps"`
	Chain string          `cbor:"3,keyasint,omitempty" json:"chain,omitempty"`
}

// PlanOpen moves Total out of the available balance of the spend escrow
// of (Payer, Settler) into a settlement plan paying Legs. The signer must
// be the escrow's settler (Payer zero means the signer, Settler zero the
// signer), who is also the plan's decider. A plan whose legs are all on
// this chain commits in this transaction; otherwise it waits, up to
// TimeoutBlocks, for the settler's PlanDecide (after the timeout the payer
// may abort it too). Quote, when set, is the encoding of the quote the job
// was priced under (router/pricing Quote.Encode): it must name this plan's
// split rule (SplitRuleHash of Legs), and its SHA-256 is kept with the
// plan as its quote digest. The plan's ID (PlanID) is the applied
// transaction's result data.
type PlanOpen struct {
	Legs          []PlanLeg       `cbor:"1,keyasint"`
	Total         uint64          `cbor:"2,keyasint"`
	Payer         terms.AccountID `cbor:"3,keyasint"`
	Settler       terms.AccountID `cbor:"4,keyasint"`
	Quote         []byte          `cbor:"5,keyasint,omitempty"`
	TimeoutBlocks uint64          `cbor:"6,keyasint,omitempty"`
}

func (p *PlanOpen) validate() error {
	if err := CheckLegs(p.Legs); err != nil {
		return err
	}
	if err := nonZero("plan total", p.Total); err != nil {
		return err
	}
	if len(p.Quote) > MaxQuoteBytes {
		return reject(CodeTooLarge, "plan quote is %d bytes, limit %d", len(p.Quote), MaxQuoteBytes)
	}
	if p.TimeoutBlocks > MaxPlanTimeoutBlocks {
		return reject(CodeMalformed, "plan timeout %d blocks over %d", p.TimeoutBlocks, MaxPlanTimeoutBlocks)
	}
	return nil
}

// CheckLegs checks a split rule: 1..MaxPlanLegs legs, each with a non-zero
// payee, 1..10000 basis points and a chain name of at most 64 bytes of
// UTF-8, the basis points summing to exactly 10000.
func CheckLegs(legs []PlanLeg) error {
	if len(legs) == 0 || len(legs) > MaxPlanLegs {
		return reject(CodeMalformed, "plan has %d legs, want 1..%d", len(legs), MaxPlanLegs)
	}
	var sum uint64
	for i, l := range legs {
		switch {
		case l.Payee == (terms.AccountID{}):
			return reject(CodeMalformed, "plan leg %d: payee is the zero account", i)
		case l.BPS == 0 || l.BPS > BasisPoints:
			return reject(CodeMalformed, "plan leg %d: %d basis points, want 1..%d", i, l.BPS, BasisPoints)
		case len(l.Chain) > maxLegChainBytes || !utf8.ValidString(l.Chain):
			return reject(CodeMalformed, "plan leg %d: chain name must be at most %d bytes of UTF-8", i, maxLegChainBytes)
		}
		sum += l.BPS // at most 64 × 10000: no overflow
	}
	if sum != BasisPoints {
		return reject(CodeMalformed, "plan legs sum to %d basis points, want exactly %d", sum, BasisPoints)
	}
	return nil
}

// PlanDecide records the one decision of open plan ID: Commit pays every
// leg its share in this transaction; otherwise the plan aborts and its
// total goes back to the escrow whole. Only the plan's settler decides,
// except that its payer may abort once the plan's timeout has passed.
type PlanDecide struct {
	ID     terms.Hash32 `cbor:"1,keyasint"`
	Commit bool         `cbor:"2,keyasint"`
}

func (p *PlanDecide) validate() error {
	if p.ID == (terms.Hash32{}) {
		return reject(CodeMalformed, "plan ID is zero")
	}
	return nil
}

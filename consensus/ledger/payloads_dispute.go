package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Dispute evidence limits.
const (
	MaxDisputeProofBytes  = 256 << 10 // commitment proofs (258 B per 32 tokens: ~32k tokens)
	MaxDisputeInputBytes  = 256 << 10
	MaxDisputeTokens      = 1 << 15
	MaxDisputeReasonBytes = 256
)

// ModelDeclare is a validator's declaration that it holds (Holds) or no
// longer holds the weights of catalog model ModelID: only validators that
// declared a model sit on committees for disputes about it.
type ModelDeclare struct {
	ModelID Hash32 `cbor:"1,keyasint"`
	Holds   bool   `cbor:"2,keyasint"`
}

func (p *ModelDeclare) validate() error {
	if p.ModelID == (Hash32{}) {
		return reject(CodeMalformed, "declared model ID is zero")
	}
	return nil
}

// Subject kinds.
const (
	SubjectRecord      uint8 = 1 // a settled payment record with an optimistic receipt
	SubjectExpertBatch uint8 = 2 // a stored expert batch (not yet on chain: refused)
)

// ExpertBatchRef names a stored expert batch of a mixture-of-experts call:
// the holder machine, the model, layer and expert, and the hash of the
// holder's signed expert receipt. Disputes over batches are refused until
// batches are stored on chain.
type ExpertBatchRef struct {
	Holder      identity.MachineID `cbor:"1,keyasint" json:"holder"`
	Model       Hash32             `cbor:"2,keyasint" json:"model"`
	Layer       uint32             `cbor:"3,keyasint" json:"layer"`
	Expert      uint32             `cbor:"4,keyasint" json:"expert"`
	ReceiptHash Hash32             `cbor:"5,keyasint" json:"receipt_hash"`
}

// DisputeSubject is what a dispute is about: a settled record, named by
// its payer and request digest, or an expert batch.
type DisputeSubject struct {
	Kind          uint8           `cbor:"1,keyasint" json:"kind"`
	Payer         AccountID       `cbor:"2,keyasint,omitempty" json:"payer,omitzero"`
	RequestDigest Hash32          `cbor:"3,keyasint,omitempty" json:"request_digest,omitzero"`
	Batch         *ExpertBatchRef `cbor:"4,keyasint,omitempty" json:"batch,omitempty"`
}

// DisputeEvidence is what a committee member re-executes. For a record:
// the provider's receipt envelope (hashing to the record's receipt hash,
// with a commitment hash: the optimistic level), the commitment proofs
// (inference/commit Encode, hashing to that commitment hash), the
// generated token IDs, and the request's input as the provider committed
// to it (opaque to the chain; a member checks it against the receipt's
// input commitment). Reason is the disputer's note.
type DisputeEvidence struct {
	Receipt []byte   `cbor:"1,keyasint" json:"receipt"`
	Proofs  []byte   `cbor:"2,keyasint" json:"proofs"`
	Tokens  []uint32 `cbor:"3,keyasint" json:"tokens"`
	Input   []byte   `cbor:"4,keyasint,omitempty" json:"input,omitempty"`
	Reason  string   `cbor:"5,keyasint,omitempty" json:"reason,omitempty"`
}

// DisputeOpen disputes Subject with Bond from the signer's balance (at
// least the governed DisputeMinBond). The dispute's ID (DisputeID of the
// subject) is the applied transaction's result data.
type DisputeOpen struct {
	Subject  DisputeSubject  `cbor:"1,keyasint"`
	Evidence DisputeEvidence `cbor:"2,keyasint"`
	Bond     uint64          `cbor:"3,keyasint"`
}

func (p *DisputeOpen) validate() error {
	s := p.Subject
	switch s.Kind {
	case SubjectRecord:
		if s.Batch != nil || s.RequestDigest == (Hash32{}) {
			return reject(CodeMalformed, "record dispute needs a request digest and no batch")
		}
	case SubjectExpertBatch:
		if s.Batch == nil {
			return reject(CodeMalformed, "expert-batch dispute names no batch")
		}
	default:
		return reject(CodeMalformed, "dispute subject kind %d, want %d (record) or %d (expert batch)", s.Kind, SubjectRecord, SubjectExpertBatch)
	}
	e := p.Evidence
	switch {
	case len(e.Receipt) > MaxReceiptBytes:
		return reject(CodeTooLarge, "dispute receipt is %d bytes, limit %d", len(e.Receipt), MaxReceiptBytes)
	case len(e.Proofs) > MaxDisputeProofBytes:
		return reject(CodeTooLarge, "dispute proofs are %d bytes, limit %d", len(e.Proofs), MaxDisputeProofBytes)
	case len(e.Tokens) > MaxDisputeTokens:
		return reject(CodeTooLarge, "dispute has %d tokens, limit %d", len(e.Tokens), MaxDisputeTokens)
	case len(e.Input) > MaxDisputeInputBytes:
		return reject(CodeTooLarge, "dispute input is %d bytes, limit %d", len(e.Input), MaxDisputeInputBytes)
	case len(e.Reason) > MaxDisputeReasonBytes:
		return reject(CodeTooLarge, "dispute reason is %d bytes, limit %d", len(e.Reason), MaxDisputeReasonBytes)
	}
	return nonZero("dispute bond", p.Bond)
}

// Verdict is a committee member's finding.
type Verdict uint8

// Verdicts. VerdictNone is a member that never revealed.
const (
	VerdictNone     Verdict = 0
	VerdictGuilty   Verdict = 1 // the commitment does not match the weights
	VerdictInnocent Verdict = 2 // it does
	VerdictAbstain  Verdict = 3 // the member cannot tell (it does not hold the weights)
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case VerdictNone:
		return "none"
	case VerdictGuilty:
		return "guilty"
	case VerdictInnocent:
		return "innocent"
	case VerdictAbstain:
		return "abstain"
	}
	return "invalid"
}

// MarshalText names the verdict in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses a verdict name.
func (v *Verdict) UnmarshalText(b []byte) error {
	for x := VerdictNone; x <= VerdictAbstain; x++ {
		if x.String() == string(b) {
			*v = x
			return nil
		}
	}
	return fmt.Errorf("ledger: verdict %q: want none, guilty, innocent or abstain", b)
}

// VoteReveal opens a member's committed vote.
type VoteReveal struct {
	Verdict Verdict `cbor:"1,keyasint"`
	Salt    Hash32  `cbor:"2,keyasint"`
}

// DisputeVote is a committee member's vote on dispute ID in round Round:
// first Commitment (VoteCommitment of its verdict and a secret salt) in
// the commit phase, then Reveal in the reveal phase, so no member sees
// another's vote before committing its own. Exactly one of the two is set.
type DisputeVote struct {
	ID         Hash32      `cbor:"1,keyasint"`
	Round      uint8       `cbor:"2,keyasint"`
	Commitment Hash32      `cbor:"3,keyasint,omitempty"`
	Reveal     *VoteReveal `cbor:"4,keyasint,omitempty"`
}

func (p *DisputeVote) validate() error {
	if p.ID == (Hash32{}) {
		return reject(CodeMalformed, "dispute ID is zero")
	}
	if p.Round != 1 && p.Round != 2 {
		return reject(CodeMalformed, "dispute round %d, want 1 or 2", p.Round)
	}
	hasCommit := p.Commitment != (Hash32{})
	if hasCommit == (p.Reveal != nil) {
		return reject(CodeMalformed, "a dispute vote carries exactly one of a commitment and a reveal")
	}
	if p.Reveal != nil && (p.Reveal.Verdict < VerdictGuilty || p.Reveal.Verdict > VerdictAbstain) {
		return reject(CodeMalformed, "revealed verdict %d, want 1 (guilty), 2 (innocent) or 3 (abstain)", p.Reveal.Verdict)
	}
	return nil
}

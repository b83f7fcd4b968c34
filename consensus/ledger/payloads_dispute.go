package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Dispute evidence limits.
const (
	MaxDisputeProofBytes  = 256 << 10 // commitment proofs (258 B per 32 tokens: ~32k tokens)
	MaxDisputeInputBytes  = 256 << 10
	MaxDisputeTokens      = 1 << 15
	MaxDisputeReasonBytes = 256
	// An expert-batch dispute carries one batch's input and output rows
	// and the hashes of the call's receipts from the holder, all inside
	// one transaction (MaxTxBytes): a batch of up to 256 KiB of rows each
	// way (64 rows of dim 1024) and a call of up to 8192 exchanges with
	// the holder (one per MoE layer per forward pass). Larger batches are
	// not disputable on this chain.
	MaxDisputeRowBytes      = 256 << 10
	MaxDisputeReceiptHashes = 8192
)

// ModelDeclare is a validator's declaration that it holds (Holds) or no
// longer holds the weights of catalog model ModelID: only validators that
// declared a model sit on committees for disputes about it.
type ModelDeclare struct {
	ModelID terms.Hash32 `cbor:"1,keyasint"`
	Holds   bool         `cbor:"2,keyasint"`
}

func (p *ModelDeclare) validate() error {
	if p.ModelID == (terms.Hash32{}) {
		return reject(CodeMalformed, "declared model ID is zero")
	}
	return nil
}

// Subject kinds.
const (
	SubjectRecord      uint8 = 1 // a settled payment record with an optimistic receipt
	SubjectExpertBatch uint8 = 2 // an expert batch of a settled expert payment record
)

// ExpertBatchRef names a stored expert batch of a mixture-of-experts call:
// the holder machine, the model, layer and expert, and the hash of the
// holder's signed expert receipt.
type ExpertBatchRef struct {
	Holder      identity.MachineID `cbor:"1,keyasint" json:"holder"`
	Model       terms.Hash32       `cbor:"2,keyasint" json:"model"`
	Layer       uint32             `cbor:"3,keyasint" json:"layer"`
	Expert      uint32             `cbor:"4,keyasint" json:"expert"`
	ReceiptHash terms.Hash32       `cbor:"5,keyasint" json:"receipt_hash"`
}

// DisputeSubject is what a dispute is about: a settled record, named by
// its payer and request digest, or an expert batch (Batch) of the call
// that the settled expert payment record (Payer, RequestDigest) paid its
// holder for: the record gives the dispute window, the accused machine
// (its provider, which must be Batch.Holder) and the payment a conviction
// reverses.
type DisputeSubject struct {
	Kind          uint8           `cbor:"1,keyasint" json:"kind"`
	Payer         terms.AccountID `cbor:"2,keyasint,omitempty" json:"payer,omitzero"`
	RequestDigest terms.Hash32    `cbor:"3,keyasint,omitempty" json:"request_digest,omitzero"`
	Batch         *ExpertBatchRef `cbor:"4,keyasint,omitempty" json:"batch,omitempty"`
}

// DisputeEvidence is what a committee member re-executes. For a record,
// exactly what the provider signed (checkEvidence refuses anything else):
// the receipt envelope (hashing to the record's receipt hash, with a
// commitment hash and a tokens hash: the optimistic level), the
// commitment proofs (inference/commit Encode, hashing to that commitment
// hash, one decode step per token), the generated token IDs (hashing to
// the receipt's TokensHash), and the request's input as the provider
// committed to it (receipt.EvidenceInput JSON, committing to the
// receipt's input commitment). Reason is the disputer's note.
//
// For an expert batch: Receipt is the holder's signed expert receipt
// envelope (hashing to Batch.ReceiptHash), ReceiptHashes the SHA-256 of
// each receipt of the call from the holder in order (hashing, as
// HolderUsage.ReceiptsHash does, to the record's quote digest), Entry the
// batch's index in the receipt, and Rows and Output the exact input and
// output bytes whose SHA-256 the entry signs. Proofs, Tokens and Input
// stay empty. The new keys are omitted when empty, so a record's evidence
// encodes as it always did.
//
// Chunk names the disputed commitment chunk of a record (the first one
// that fails, found by the disputer off chain): the committee re-executes
// the prefix up to that chunk's end and judges that chunk alone, so a
// dispute costs it a prefill of the prompt and (Chunk+1)·32 tokens at
// most, and naming a chunk that verifies loses the bond. A chunk past
// the proofs' last is refused at decode; an expert batch names none.
type DisputeEvidence struct {
	Receipt       []byte         `cbor:"1,keyasint" json:"receipt"`
	Proofs        []byte         `cbor:"2,keyasint" json:"proofs"`
	Tokens        []uint32       `cbor:"3,keyasint" json:"tokens"`
	Input         []byte         `cbor:"4,keyasint,omitempty" json:"input,omitempty"`
	Reason        string         `cbor:"5,keyasint,omitempty" json:"reason,omitempty"`
	ReceiptHashes []terms.Hash32 `cbor:"6,keyasint,omitempty" json:"receipt_hashes,omitempty"`
	Entry         uint32         `cbor:"7,keyasint,omitempty" json:"entry,omitempty"`
	Rows          []byte         `cbor:"8,keyasint,omitempty" json:"rows,omitempty"`
	Output        []byte         `cbor:"9,keyasint,omitempty" json:"output,omitempty"`
	Chunk         uint32         `cbor:"10,keyasint,omitempty" json:"chunk,omitempty"`
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
	e := p.Evidence
	batchFields := len(e.ReceiptHashes) > 0 || e.Entry != 0 || len(e.Rows) > 0 || len(e.Output) > 0
	receiptLimit := receipt.MaxReceiptBytes
	switch s.Kind {
	case SubjectRecord:
		if s.Batch != nil || s.RequestDigest == (terms.Hash32{}) {
			return reject(CodeMalformed, "record dispute needs a request digest and no batch")
		}
		if batchFields {
			return reject(CodeMalformed, "record dispute carries expert-batch evidence")
		}
		// Proofs of a broken framing are refused by checkEvidence with
		// the reason (so are empty proofs); here only a chunk they cannot
		// have.
		if steps, err := proofSteps(e.Proofs); err == nil && steps > 0 && uint64(e.Chunk)*commitChunkSteps >= uint64(steps) {
			return reject(CodeMalformed, "disputed chunk %d is past the last of the %d chunks the proofs cover", e.Chunk, (steps+commitChunkSteps-1)/commitChunkSteps)
		}
	case SubjectExpertBatch:
		if s.Batch == nil || s.RequestDigest == (terms.Hash32{}) {
			return reject(CodeMalformed, "expert-batch dispute needs a batch and the request digest of the record paying it")
		}
		if len(e.Proofs) > 0 || len(e.Tokens) > 0 || len(e.Input) > 0 || e.Chunk != 0 {
			return reject(CodeMalformed, "expert-batch dispute carries a record's proofs, tokens, input or chunk")
		}
		if err := validateBatchEvidence(&e); err != nil {
			return err
		}
		receiptLimit = MaxExpertReceiptBytes
	default:
		return reject(CodeMalformed, "dispute subject kind %d, want %d (record) or %d (expert batch)", s.Kind, SubjectRecord, SubjectExpertBatch)
	}
	switch {
	case len(e.Receipt) > receiptLimit:
		return reject(CodeTooLarge, "dispute receipt is %d bytes, limit %d", len(e.Receipt), receiptLimit)
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

// validateBatchEvidence bounds an expert batch's evidence.
func validateBatchEvidence(e *DisputeEvidence) error {
	switch {
	case len(e.ReceiptHashes) == 0:
		return reject(CodeMalformed, "expert-batch evidence lists no receipt hashes")
	case len(e.ReceiptHashes) > MaxDisputeReceiptHashes:
		return reject(CodeTooLarge, "expert-batch evidence lists %d receipt hashes, limit %d", len(e.ReceiptHashes), MaxDisputeReceiptHashes)
	case len(e.Rows) > MaxDisputeRowBytes || len(e.Output) > MaxDisputeRowBytes:
		return reject(CodeTooLarge, "expert batch of %d input and %d output bytes, limit %d each", len(e.Rows), len(e.Output), MaxDisputeRowBytes)
	case len(e.Rows) == 0 || len(e.Rows)%4 != 0 || len(e.Output) != len(e.Rows):
		return reject(CodeMalformed, "expert batch of %d input and %d output bytes: want equal, nonzero multiples of 4 (float32 rows)", len(e.Rows), len(e.Output))
	}
	return nil
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
	if n, ok := enumName(uint8(v), "none", "guilty", "innocent", "abstain"); ok {
		return n
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
	Verdict Verdict      `cbor:"1,keyasint"`
	Salt    terms.Hash32 `cbor:"2,keyasint"`
}

// DisputeVote is a committee member's vote on dispute ID in round Round:
// first Commitment (VoteCommitment of its verdict and a secret salt) in
// the commit phase, then Reveal in the reveal phase, so no member sees
// another's vote before committing its own. Exactly one of the two is set.
type DisputeVote struct {
	ID         terms.Hash32 `cbor:"1,keyasint"`
	Round      uint8        `cbor:"2,keyasint"`
	Commitment terms.Hash32 `cbor:"3,keyasint,omitempty"`
	Reveal     *VoteReveal  `cbor:"4,keyasint,omitempty"`
}

func (p *DisputeVote) validate() error {
	if p.ID == (terms.Hash32{}) {
		return reject(CodeMalformed, "dispute ID is zero")
	}
	if p.Round != 1 && p.Round != 2 {
		return reject(CodeMalformed, "dispute round %d, want 1 or 2", p.Round)
	}
	hasCommit := p.Commitment != (terms.Hash32{})
	if hasCommit == (p.Reveal != nil) {
		return reject(CodeMalformed, "a dispute vote carries exactly one of a commitment and a reveal")
	}
	if p.Reveal != nil && (p.Reveal.Verdict < VerdictGuilty || p.Reveal.Verdict > VerdictAbstain) {
		return reject(CodeMalformed, "revealed verdict %d, want 1 (guilty), 2 (innocent) or 3 (abstain)", p.Reveal.Verdict)
	}
	return nil
}

package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// commitmentDomain prefixes the proofs a logit commitment hash covers
// (inference/commit Hash): the chain checks a dispute's proofs are the
// ones the receipt signed without importing the engine.
const commitmentDomain = "tenzro/logit-commitment/v1\x00"

// Proof set layout (inference/commit Encode): a u32 count, then each
// chunk proof prefixed by its u16 length; a proof is a u16 modulus and
// commitProofTopK u16 coefficients per decode step it covers.
const (
	commitProofTopK  = 4
	commitChunkSteps = 32
)

// checkEvidence checks that the evidence is exactly the record's
// optimistic answer as its provider signed it, so that a committee only
// ever re-executes what the provider committed to: the receipt is the one
// settled and names the record's machine; it signs a commitment hash (the
// optimistic level) and the token IDs (TokensHash); the tokens hash to
// what it signs and are as many as the decode steps the proofs cover; the
// proofs hash to its commitment; and the input is the one its input
// commitment covers. The claimed units are not compared: they are a
// billing claim the gateway caps, and a provider over-claiming one would
// otherwise make its answer undisputable. Evidence failing any of
// these is refused here, before the bond is taken: evidence of the wrong
// shape proves nothing about the provider, and a committee must never
// mistake it for guilt. It returns the receipt's model. The receipt's
// signature was verified when the record settled and its hash binds the
// same bytes.
func checkEvidence(rec *SettledRecord, e *DisputeEvidence) (terms.Hash32, error) {
	var model terms.Hash32
	if got := terms.Hash32(sha256.Sum256(e.Receipt)); got != rec.Record.ReceiptHash {
		return model, reject(CodeBadEvidence, "receipt hashes to %s, the settled record's is %s", got, rec.Record.ReceiptHash)
	}
	_, rc, err := receipt.Parse(e.Receipt)
	if err != nil {
		return model, reject(CodeBadEvidence, "receipt: %v", err)
	}
	if !bytes.Equal(rc.MachineID, rec.Record.Provider[:]) {
		return model, reject(CodeBadEvidence, "receipt names machine %x, the record's provider is %s", rc.MachineID, rec.Record.Provider)
	}
	if len(rc.CommitmentHash) != len(model) {
		return model, reject(CodeBadEvidence, "receipt carries no logit commitment: the answer was not optimistic")
	}
	if len(rc.TokensHash) != len(model) {
		return model, reject(CodeBadEvidence, "receipt signs no token IDs (signed before receipts bound them): its answer cannot be re-executed as signed")
	}
	if len(e.Tokens) == 0 {
		return model, reject(CodeBadEvidence, "no generated token IDs to re-execute")
	}
	if h := receipt.TokensHash(e.Tokens); !bytes.Equal(h[:], rc.TokensHash) {
		return model, reject(CodeBadEvidence, "%d token IDs hash to %x, the receipt signs %x", len(e.Tokens), h, rc.TokensHash)
	}
	if h := sha256.Sum256(cat(commitmentDomain, e.Proofs)); !bytes.Equal(h[:], rc.CommitmentHash) {
		return model, reject(CodeBadEvidence, "proofs hash to %x, the receipt signs %x", h, rc.CommitmentHash)
	}
	steps, err := proofSteps(e.Proofs)
	if err != nil {
		return model, reject(CodeBadEvidence, "proofs: %v", err)
	}
	if steps != len(e.Tokens) {
		return model, reject(CodeBadEvidence, "proofs cover %d decode steps, the receipt signs %d token IDs", steps, len(e.Tokens))
	}
	in, err := receipt.DecodeEvidenceInput(e.Input)
	if err != nil {
		return model, reject(CodeBadEvidence, "%v", err)
	}
	if got := in.Commitment(rc.ModelID); !bytes.Equal(got[:], rc.InputCommitment) {
		return model, reject(CodeBadEvidence, "input commits to %x, the receipt signs %x", got, rc.InputCommitment)
	}
	copy(model[:], rc.ModelID)
	return model, nil
}

// proofSteps returns how many decode steps an encoded proof set covers,
// checking its framing: every proof a whole number of steps, all but the
// last a full chunk, no trailing bytes. The field values are the
// committee's to check (it holds the engine); their count is the chain's.
func proofSteps(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, fmt.Errorf("proof set of %d bytes has no count", len(b))
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	const stepBytes = 2 * commitProofTopK
	if uint64(n)*(2+2+stepBytes) > uint64(len(b)) {
		return 0, fmt.Errorf("%d proofs cannot fit in %d bytes", n, len(b))
	}
	steps := 0
	for i := uint32(0); i < n; i++ {
		if len(b) < 2 {
			return 0, fmt.Errorf("proof %d: truncated", i)
		}
		l := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+l {
			return 0, fmt.Errorf("proof %d: %d bytes declared, %d left", i, l, len(b)-2)
		}
		if l < 2+stepBytes || (l-2)%stepBytes != 0 || (l-2)/stepBytes > commitChunkSteps {
			return 0, fmt.Errorf("proof %d of %d bytes is not 1..%d whole steps", i, l, commitChunkSteps)
		}
		s := (l - 2) / stepBytes
		if i+1 < n && s != commitChunkSteps {
			return 0, fmt.Errorf("proof %d covers %d steps but is not the last", i, s)
		}
		steps += s
		b = b[2+l:]
	}
	if len(b) != 0 {
		return 0, fmt.Errorf("%d trailing bytes", len(b))
	}
	return steps, nil
}

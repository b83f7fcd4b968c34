package store

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// Limits on kept evidence. MaxEvidenceInput is the chain's limit on a
// dispute's input (ledger.MaxDisputeInputBytes): a larger one could never
// open a dispute. The token and proof bounds are far above any answer a
// node serves; they only bound what a corrupt store can make us allocate.
const (
	MaxEvidenceInput  = 256 << 10
	MaxEvidenceTokens = 1 << 18
	MaxEvidenceProofs = 4 + (MaxEvidenceTokens/32+1)*(2+2+4*2*32)
	maxEvidenceRecord = MaxEvidenceInput + MaxEvidenceProofs + 5*MaxEvidenceTokens + MaxAccountLen + MaxNonceLen + 64
)

// Evidence is what a gateway keeps of a paid optimistic answer so its
// buyer can dispute it without writing anything by hand: with the receipt
// stored under Nonce, it is a dispute's whole evidence (DESIGN.md
// "Verifiable answers"). Payer is the buyer's account at this node, the
// only reader besides the operator.
type Evidence struct {
	Payer  string   `cbor:"1,keyasint"`
	Nonce  []byte   `cbor:"2,keyasint"`
	Proofs []byte   `cbor:"3,keyasint"` // inference/commit Encode, hashing to the receipt's commitment hash
	Tokens []uint32 `cbor:"4,keyasint"` // the generated token IDs, hashing to its TokensHash
	Input  []byte   `cbor:"5,keyasint"` // receipt.EvidenceInput JSON, committing to its input commitment
}

func (e *Evidence) check() error {
	switch {
	case e.Payer == "" || len(e.Payer) > MaxAccountLen:
		return fmt.Errorf("%w: payer must be 1..%d bytes", ErrInvalid, MaxAccountLen)
	case len(e.Nonce) == 0 || len(e.Nonce) > MaxNonceLen:
		return fmt.Errorf("%w: nonce is %d bytes, want 1..%d", ErrInvalid, len(e.Nonce), MaxNonceLen)
	case len(e.Input) > MaxEvidenceInput:
		return fmt.Errorf("%w: input of %d bytes exceeds a dispute's %d", ErrInvalid, len(e.Input), MaxEvidenceInput)
	case len(e.Tokens) > MaxEvidenceTokens || len(e.Proofs) > MaxEvidenceProofs:
		return fmt.Errorf("%w: %d tokens, %d proof bytes: above %d, %d", ErrInvalid, len(e.Tokens), len(e.Proofs), MaxEvidenceTokens, MaxEvidenceProofs)
	}
	return nil
}

// PutEvidence keeps the evidence of the request with requestDigest (the
// payment record's). A later call for the same digest replaces it.
func (s *Store) PutEvidence(requestDigest []byte, e Evidence) error {
	if len(requestDigest) != 32 {
		return fmt.Errorf("store: put evidence: %w: request digest is %d bytes, want 32", ErrInvalid, len(requestDigest))
	}
	if err := e.check(); err != nil {
		return fmt.Errorf("store: put evidence: %w", err)
	}
	b, err := cborx.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: put evidence: %w", err)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.d.Put(context.Background(), key("e", hex.EncodeToString(requestDigest)), b); err != nil {
		return fmt.Errorf("store: put evidence: %w", err)
	}
	s.wrote()
	return nil
}

// GetEvidence returns the evidence kept for requestDigest, or ErrNotFound.
func (s *Store) GetEvidence(requestDigest []byte) (Evidence, error) {
	if err := s.rlock(); err != nil {
		return Evidence{}, err
	}
	defer s.mu.RUnlock()
	b, err := s.get(key("e", hex.EncodeToString(requestDigest)))
	if err != nil {
		return Evidence{}, fmt.Errorf("store: evidence %x: %w", requestDigest, err)
	}
	e, err := decodeEvidence(b)
	if err != nil {
		return Evidence{}, fmt.Errorf("store: evidence %x: %w", requestDigest, err)
	}
	return e, nil
}

// decodeEvidence parses a stored evidence record, refusing one that could
// not have been put.
func decodeEvidence(b []byte) (Evidence, error) {
	var e Evidence
	if err := cborx.UnmarshalCanonical(b, maxEvidenceRecord, &e); err != nil {
		return Evidence{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err := e.check(); err != nil {
		return Evidence{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return e, nil
}

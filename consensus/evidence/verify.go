package evidence

import (
	"bytes"
	"errors"
	"fmt"

	cmtmath "github.com/cometbft/cometbft/libs/math"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus"
)

// Verification errors. Verify wraps exactly one of them.
var (
	ErrFormat            = errors.New("evidence: not a pack of format " + FormatPack)
	ErrChainID           = errors.New("evidence: pack is for another chain than the trusted validators")
	ErrHeader            = errors.New("evidence: signed header invalid (tampered header or commit)")
	ErrValidatorSet      = errors.New("evidence: validator set does not match the header")
	ErrSignature         = errors.New("evidence: invalid commit signature")
	ErrInsufficientPower = errors.New("evidence: commit not signed by more than 2/3 of validator power")
	ErrUntrusted         = errors.New("evidence: commit not signed by more than 2/3 of the trusted validators' power")
	ErrAppHash           = errors.New("evidence: app hash is not the header's")
	ErrProof             = errors.New("evidence: range proof does not verify against the app hash")
	ErrRecord            = errors.New("evidence: record is not the one its proof commits to")
	ErrForeignRecord     = errors.New("evidence: record belongs to another account")
)

// trustLevel is the share of the trusted set's power that must have signed.
var trustLevel = cmtmath.Fraction{Numerator: 2, Denominator: 3}

// Verify checks pack offline against a trusted validator set (see the
// package documentation for the checks) and reports what it proves. A
// non-nil error wraps one of the sentinel errors above.
func Verify(pack *Pack, trusted ValidatorSet) (Report, error) {
	if pack == nil || pack.Format != FormatPack {
		return Report{}, ErrFormat
	}
	if pack.FromHeight < 1 || pack.ToHeight < pack.FromHeight {
		return Report{}, fmt.Errorf("%w: heights %d..%d", ErrFormat, pack.FromHeight, pack.ToHeight)
	}
	if trusted.Set == nil {
		return Report{}, fmt.Errorf("%w: no trusted validator set given", ErrUntrusted)
	}
	if trusted.ChainID != "" && trusted.ChainID != pack.ChainID {
		return Report{}, fmt.Errorf("%w: pack %q, trusted %q", ErrChainID, pack.ChainID, trusted.ChainID)
	}
	sh := pack.SignedHeader
	if sh == nil {
		return Report{}, fmt.Errorf("%w: missing", ErrHeader)
	}
	// Header and commit agree: chain ID, height, commit for this header's hash.
	if err := sh.ValidateBasic(pack.ChainID); err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	if sh.Height != pack.ToHeight+1 {
		return Report{}, fmt.Errorf("%w: header height %d, want %d (to_height + 1)", ErrHeader, sh.Height, pack.ToHeight+1)
	}
	vals := pack.Validators
	if vals == nil {
		return Report{}, fmt.Errorf("%w: missing", ErrValidatorSet)
	}
	if h := vals.Hash(); !bytes.Equal(h, sh.ValidatorsHash) {
		return Report{}, fmt.Errorf("%w: set hashes to %X, header says %X", ErrValidatorSet, h, sh.ValidatorsHash)
	}
	// Every signature in the commit, > 2/3 of the header's validator power.
	if err := vals.VerifyCommit(pack.ChainID, sh.Commit.BlockID, sh.Height, sh.Commit); err != nil {
		var low cmttypes.ErrNotEnoughVotingPowerSigned
		if errors.As(err, &low) {
			return Report{}, fmt.Errorf("%w: %w", ErrInsufficientPower, err)
		}
		return Report{}, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	// > 2/3 of the power the auditor trusts.
	if err := trusted.Set.VerifyCommitLightTrustingAllSignatures(pack.ChainID, sh.Commit, trustLevel); err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	if !bytes.Equal(pack.AppHash[:], sh.AppHash) {
		return Report{}, fmt.Errorf("%w: pack %s, header %X", ErrAppHash, pack.AppHash, sh.AppHash)
	}
	var err error
	if pack.Machine != nil {
		err = consensus.VerifyRecordRange(sh.AppHash, consensus.ProviderRecordRange{Owner: *pack.Machine,
			From: pack.FromHeight, To: pack.ToHeight, Height: pack.ToHeight, Records: pack.Records, Proof: pack.Proof})
	} else {
		err = consensus.VerifyRecordRange(sh.AppHash, consensus.RecordRange{Owner: pack.Account, From: pack.FromHeight,
			To: pack.ToHeight, Height: pack.ToHeight, Records: pack.Records, Proof: pack.Proof})
	}
	switch {
	case errors.Is(err, consensus.ErrForeignRecord):
		return Report{}, fmt.Errorf("%w: %w", ErrForeignRecord, err)
	case errors.Is(err, consensus.ErrRecordMismatch):
		return Report{}, fmt.Errorf("%w: %w", ErrRecord, err)
	case err != nil:
		return Report{}, fmt.Errorf("%w: %w", ErrProof, err)
	}
	return newReport(pack, trusted)
}

// signedPower sums the power of set members whose commit signature is for
// the block (Verify has checked every such signature already).
func signedPower(set *cmttypes.ValidatorSet, commit *cmttypes.Commit) (signed int64, signers int) {
	for _, cs := range commit.Signatures {
		if cs.BlockIDFlag != cmttypes.BlockIDFlagCommit {
			continue
		}
		if _, v := set.GetByAddress(cs.ValidatorAddress); v != nil {
			signed += v.VotingPower
			signers++
		}
	}
	return signed, signers
}

// Package evidence exports and verifies evidence packs: files an auditor
// checks with no network to learn, with certainty bounded only by the
// honesty of > 2/3 of validator power, exactly which payment records an
// account settled in a span of heights and what it paid.
//
// A pack (Pack, JSON, format FormatPack) holds, for a payer account and
// heights From..To:
//
//   - the account's settled payment records at those heights;
//   - a range proof (consensus.RangeProof) of the payer's entries in the
//     per-payer, per-height record index, against the state root after
//     block To: it proves those entries and that there are no others;
//   - the signed header of block To+1, whose AppHash is that state root,
//     with its commit (CometBFT's own JSON, as its RPC serves it);
//   - the validator set of block To+1 (CometBFT JSON).
//
// Verify checks, in order: the format; the chain ID against the trusted
// validator file; the header and commit (CometBFT's ValidateBasic: chain
// ID, commit height, commit block ID = header hash); that the pack's
// validator set hashes to the header's ValidatorsHash; every commit
// signature, requiring > 2/3 of that set's power (CometBFT's VerifyCommit);
// that validators of the auditor's trusted set holding > 2/3 of its power
// signed (VerifyCommitLightTrustingAllSignatures); that the pack's app
// hash is the header's; the range proof against it; and that each record
// is the one its proven index entry commits to and belongs to the account.
// Each failure wraps one sentinel error, so a caller (and the tests) can
// tell a forged signature from a tampered record.
//
// The trusted set comes from a file the auditor already trusts: a CometBFT
// genesis.json of the chain, or a set written by WriteValidatorSet.
package evidence

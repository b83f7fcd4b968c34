package ledger

import (
	"errors"
	"fmt"
)

// Code is the ABCI result code of a rejected transaction. Codes are part of
// the protocol: they appear in CheckTx and FinalizeBlock results and never
// change meaning.
type Code uint32

// Rejection codes. CodeOK (0) means the transaction applied.
const (
	CodeOK               Code = 0  // applied
	CodeMalformed        Code = 1  // not canonical CBOR, unknown kind, bad field (length, zero amount, ...)
	CodeBadSignature     Code = 2  // signature does not verify over the signing bytes (wrong key, chain or body)
	CodeStaleNonce       Code = 3  // nonce below the account's next nonce: a replay
	CodeFutureNonce      Code = 4  // nonce above the account's next nonce
	CodeOverdraft        Code = 5  // balance, escrow or stake smaller than the amount
	CodeOverflow         Code = 6  // a sum would exceed 2^64-1 micro-units (or int64 power)
	CodeUnknownAccount   Code = 7  // signer has no account
	CodeUnknownProvider  Code = 8  // machine ID not registered
	CodeNotValidator     Code = 9  // signer is not a validator with power
	CodeDuplicate        Code = 10 // registration already there as given, consensus key or validator already registered
	CodeBondTooLow       Code = 11 // serving bond below the governed minimum
	CodeInvalidParams    Code = 12 // proposed parameters fail validation
	CodeUnknownProposal  Code = 13 // no such proposal
	CodeAlreadyVoted     Code = 14 // this validator already voted on the proposal or hour
	CodeProposalClosed   Code = 15 // proposal passed or its voting period ended
	CodeBadHour          Code = 16 // SLA hour in the future or outside the window
	CodeDuplicateRecord  Code = 17 // payment record (payer, request digest) or (provider, request digest) already settled
	CodeNotAuthorized    Code = 18 // signer may not act on this escrow or provider
	CodeUnbonding        Code = 19 // provider unbonding, or bond still locked
	CodeTooLarge         Code = 20 // transaction over MaxTxBytes or too many records
	CodeBadIdentity      Code = 21 // machine ID does not match the keys, or a key or peer ID does not parse
	CodeUnknownEscrow    Code = 22 // payer has no escrow
	CodeLastValidator    Code = 23 // the change would leave no validator
	CodeBadReceipt       Code = 24 // receipt envelope malformed, not hashing to ReceiptHash, expired or badly signed
	CodeWrongMachine     Code = 25 // receipt signed by another machine than the record's registered provider
	CodeBadHWSig         Code = 26 // registration not signed by the machine's hardware key over (chain, operator, machine, peer)
	CodeBadPQSig         Code = 27 // registration not signed by the machine's ML-DSA-65 key
	CodeBadPeerSig       Code = 28 // registration not signed by the key of its peer ID
	CodePeerTaken        Code = 29 // peer ID registered to a machine of another operator
	CodeMachineTaken     Code = 30 // machine registered by another operator
	CodePairingChanged   Code = 31 // machine or peer ID already registered in another machine/peer pairing
	CodeNameTaken        Code = 32 // model name bound to another model ID
	CodeNoProvider       Code = 33 // signer operates no registered, bonded provider
	CodeBadRecordSig     Code = 34 // payment record not signed by the settler of the escrow it draws on
	CodeExpiredRecord    Code = 35 // payment record past its expiry height
	CodeFeeTooLow        Code = 36 // signer cannot pay FeePerTx (a settlement: plus FeePerRecord per record, up front)
	CodeUnknownStream    Code = 37 // no stream escrow with this ID
	CodeStreamClosed     Code = 38 // stream escrow stopped or paid out in full
	CodeNotPayee         Code = 39 // signer is not the operator a stream escrow pays
	CodeUnknownPlan      Code = 40 // no settlement plan with this ID
	CodePlanDecided      Code = 41 // settlement plan already committed or aborted
	CodeWrongSplitRule   Code = 42 // plan's split rule is not the one its quote names
	CodeUnknownDispute   Code = 43 // no dispute with this ID
	CodeWrongPhase       Code = 44 // dispute not in the phase the vote needs (drawing, commit, reveal, resolved)
	CodeNotMember        Code = 45 // signer is not on the dispute's current committee
	CodeBadReveal        Code = 46 // revealed vote does not match the member's commitment
	CodeDisputeWindow    Code = 47 // record settled outside the governed dispute window
	CodeBadEvidence      Code = 48 // dispute evidence does not match the subject (receipt, proofs, level)
	CodeNoCommittee      Code = 49 // no eligible validator declared the model's weights
	CodeTooManyDisputes  Code = 50 // the chain holds MaxActiveDisputes open disputes
	CodeRecordMismatch   Code = 51 // payment record's request, payer or settler is not what the provider's receipt names
	CodeUnderpriced      Code = 52 // payment record priced below the price the provider's receipt signs
	CodeWithdrawalLocked Code = 53 // escrow claim before the pending withdrawal's unlock height
	CodeConvicted        Code = 54 // record pays a machine barred by a conviction until it re-bonds
	CodeInternal         Code = 99 // store failure; the block is not applied
)

var codeNames = map[Code]string{
	CodeOK: "ok", CodeMalformed: "malformed", CodeBadSignature: "bad signature",
	CodeStaleNonce: "stale nonce", CodeFutureNonce: "future nonce", CodeOverdraft: "overdraft",
	CodeOverflow: "overflow", CodeUnknownAccount: "unknown account", CodeUnknownProvider: "unknown provider",
	CodeNotValidator: "not a validator", CodeDuplicate: "duplicate registration",
	CodeBondTooLow: "bond too low", CodeInvalidParams: "invalid parameters",
	CodeUnknownProposal: "unknown proposal", CodeAlreadyVoted: "already voted",
	CodeProposalClosed: "proposal closed", CodeBadHour: "bad SLA hour",
	CodeDuplicateRecord: "duplicate payment record", CodeNotAuthorized: "not authorized",
	CodeUnbonding: "unbonding", CodeTooLarge: "too large", CodeBadIdentity: "bad identity",
	CodeUnknownEscrow: "unknown escrow", CodeLastValidator: "last validator",
	CodeBadReceipt: "bad receipt", CodeWrongMachine: "receipt from another machine",
	CodeBadHWSig: "bad hardware key signature", CodeBadPQSig: "bad ML-DSA-65 signature",
	CodeBadPeerSig: "bad peer key signature", CodePeerTaken: "peer ID taken", CodeMachineTaken: "machine taken",
	CodePairingChanged: "machine/peer pairing changed", CodeNameTaken: "name taken",
	CodeNoProvider: "no bonded provider", CodeBadRecordSig: "bad record signature",
	CodeExpiredRecord: "expired record", CodeFeeTooLow: "cannot pay fee",
	CodeUnknownStream: "unknown stream", CodeStreamClosed: "stream closed", CodeNotPayee: "not the payee",
	CodeUnknownPlan: "unknown plan", CodePlanDecided: "plan decided", CodeWrongSplitRule: "wrong split rule",
	CodeUnknownDispute: "unknown dispute", CodeWrongPhase: "wrong dispute phase", CodeNotMember: "not a committee member",
	CodeBadReveal: "bad reveal", CodeDisputeWindow: "outside the dispute window", CodeBadEvidence: "bad evidence",
	CodeNoCommittee: "no committee", CodeTooManyDisputes: "too many disputes",
	CodeRecordMismatch: "record disagrees with its receipt", CodeUnderpriced: "record below its receipt's price",
	CodeWithdrawalLocked: "withdrawal locked", CodeConvicted: "convicted, barred until re-bond",
	CodeInternal: "internal error",
}

// String returns the code's short name.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code %d", uint32(c))
}

// TxError is a transaction rejection: a code and a message for the log.
type TxError struct {
	Code Code
	Msg  string
}

func (e *TxError) Error() string { return "ledger: " + e.Code.String() + ": " + e.Msg }

// reject builds a *TxError.
func reject(c Code, format string, args ...any) error {
	return &TxError{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the rejection code carried by err: CodeOK for nil,
// CodeInternal for errors that are not rejections.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var te *TxError
	if errors.As(err, &te) {
		return te.Code
	}
	return CodeInternal
}

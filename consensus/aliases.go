package consensus

// The state machine lives in consensus/ledger; these aliases keep the
// names callers used before the split (node/, cmd/ and the sub-packages)
// working unchanged. New code may use either.

import (
	"crypto/ed25519"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Ledger types.
type (
	Account             = ledger.Account
	AccountID           = ledger.AccountID
	AppGenesis          = ledger.AppGenesis
	ChainMeta           = ledger.ChainMeta
	Code                = ledger.Code
	Envelope            = ledger.Envelope
	Escrow              = ledger.Escrow
	EscrowFund          = ledger.EscrowFund
	EscrowWithdraw      = ledger.EscrowWithdraw
	EscrowClaim         = ledger.EscrowClaim
	SettleReport        = ledger.SettleReport
	GenesisAccount      = ledger.GenesisAccount
	GenesisEscrow       = ledger.GenesisEscrow
	GenesisValidator    = ledger.GenesisValidator
	Hash32              = ledger.Hash32
	HourTally           = ledger.HourTally
	HourVerdicts        = ledger.HourVerdicts
	Kind                = ledger.Kind
	ParamProposal       = ledger.ParamProposal
	ParamVote           = ledger.ParamVote
	Params              = ledger.Params
	PaymentRecord       = ledger.PaymentRecord
	Proposal            = ledger.Proposal
	Provider            = ledger.Provider
	ProviderRegister    = ledger.ProviderRegister
	ProviderUnbond      = ledger.ProviderUnbond
	ProviderWithdraw    = ledger.ProviderWithdraw
	SLAVerdict          = ledger.SLAVerdict
	SettledRecord       = ledger.SettledRecord
	Settlement          = ledger.Settlement
	Signer              = ledger.Signer
	Standing            = ledger.Standing
	Transfer            = ledger.Transfer
	Tx                  = ledger.Tx
	TxBody              = ledger.TxBody
	TxError             = ledger.TxError
	Validator           = ledger.Validator
	ValidatorStake      = ledger.ValidatorStake
	ValidatorTotals     = ledger.ValidatorTotals
	ValidatorUnstake    = ledger.ValidatorUnstake
	NameBind            = ledger.NameBind
	NameProposal        = ledger.NameProposal
	NameRecord          = ledger.NameRecord
	RegistrationPayload = ledger.RegistrationPayload
	Stream              = ledger.Stream
	StreamOpen          = ledger.StreamOpen
	StreamClaim         = ledger.StreamClaim
	StreamStop          = ledger.StreamStop
)

// Rejection codes (see ledger.Code).
const (
	CodeOK               = ledger.CodeOK
	CodeMalformed        = ledger.CodeMalformed
	CodeBadSignature     = ledger.CodeBadSignature
	CodeStaleNonce       = ledger.CodeStaleNonce
	CodeFutureNonce      = ledger.CodeFutureNonce
	CodeOverdraft        = ledger.CodeOverdraft
	CodeOverflow         = ledger.CodeOverflow
	CodeUnknownAccount   = ledger.CodeUnknownAccount
	CodeUnknownProvider  = ledger.CodeUnknownProvider
	CodeNotValidator     = ledger.CodeNotValidator
	CodeDuplicate        = ledger.CodeDuplicate
	CodeBondTooLow       = ledger.CodeBondTooLow
	CodeInvalidParams    = ledger.CodeInvalidParams
	CodeUnknownProposal  = ledger.CodeUnknownProposal
	CodeAlreadyVoted     = ledger.CodeAlreadyVoted
	CodeProposalClosed   = ledger.CodeProposalClosed
	CodeBadHour          = ledger.CodeBadHour
	CodeDuplicateRecord  = ledger.CodeDuplicateRecord
	CodeNotAuthorized    = ledger.CodeNotAuthorized
	CodeUnbonding        = ledger.CodeUnbonding
	CodeWithdrawalLocked = ledger.CodeWithdrawalLocked
	CodeTooLarge         = ledger.CodeTooLarge
	CodeBadIdentity      = ledger.CodeBadIdentity
	CodeUnknownEscrow    = ledger.CodeUnknownEscrow
	CodeLastValidator    = ledger.CodeLastValidator
	CodeBadReceipt       = ledger.CodeBadReceipt
	CodeWrongMachine     = ledger.CodeWrongMachine
	CodeUnknownStream    = ledger.CodeUnknownStream
	CodeStreamClosed     = ledger.CodeStreamClosed
	CodeNotPayee         = ledger.CodeNotPayee
	CodeInternal         = ledger.CodeInternal
)

// Transaction kinds.
const (
	KindTransfer         = ledger.KindTransfer
	KindValidatorStake   = ledger.KindValidatorStake
	KindValidatorUnstake = ledger.KindValidatorUnstake
	KindProviderRegister = ledger.KindProviderRegister
	KindProviderUnbond   = ledger.KindProviderUnbond
	KindProviderWithdraw = ledger.KindProviderWithdraw
	KindParamProposal    = ledger.KindParamProposal
	KindParamVote        = ledger.KindParamVote
	KindEscrowFund       = ledger.KindEscrowFund
	KindEscrowWithdraw   = ledger.KindEscrowWithdraw
	KindSettlement       = ledger.KindSettlement
	KindSLAVerdict       = ledger.KindSLAVerdict
	KindEscrowClaim      = ledger.KindEscrowClaim
	KindStreamOpen       = ledger.KindStreamOpen
	KindStreamClaim      = ledger.KindStreamClaim
	KindStreamStop       = ledger.KindStreamStop
)

// Limits and units.
const (
	MaxValueBytes   = ledger.MaxValueBytes
	BasisPoints     = ledger.BasisPoints
	PowerUnit       = ledger.PowerUnit
	ReceiptDomain   = ledger.ReceiptDomain
	MaxReceiptBytes = ledger.MaxReceiptBytes
	TxDomain        = ledger.TxDomain
	MaxTxBytes      = ledger.MaxTxBytes
	MaxRecordsPerTx = ledger.MaxRecordsPerTx
	MaxNameBytes    = ledger.MaxNameBytes
)

// AccountOf is ledger.AccountOf.
func AccountOf(pub ed25519.PublicKey) AccountID { return ledger.AccountOf(pub) }

// CodeOf is ledger.CodeOf.
func CodeOf(err error) Code { return ledger.CodeOf(err) }

// DecodeTx is ledger.DecodeTx.
func DecodeTx(chainID string, raw []byte) (*Tx, error) { return ledger.DecodeTx(chainID, raw) }

// DefaultParams is ledger.DefaultParams.
func DefaultParams() Params { return ledger.DefaultParams() }

// KeyAccount is ledger.KeyAccount.
func KeyAccount(a AccountID) []byte { return ledger.KeyAccount(a) }

// DecodeSettleReport is ledger.DecodeSettleReport.
func DecodeSettleReport(data []byte) (SettleReport, error) { return ledger.DecodeSettleReport(data) }

// KeyEscrow is ledger.KeyEscrow.
func KeyEscrow(payer, settler AccountID) []byte { return ledger.KeyEscrow(payer, settler) }

// KeyHourTally is ledger.KeyHourTally.
func KeyHourTally(m identity.MachineID, hour uint64) []byte { return ledger.KeyHourTally(m, hour) }

// KeyProposal is ledger.KeyProposal.
func KeyProposal(id uint64) []byte { return ledger.KeyProposal(id) }

// KeyProvider is ledger.KeyProvider.
func KeyProvider(m identity.MachineID) []byte { return ledger.KeyProvider(m) }

// KeyRecord is ledger.KeyRecord.
func KeyRecord(payer AccountID, requestDigest Hash32) []byte {
	return ledger.KeyRecord(payer, requestDigest)
}

// KeyRecordIndex is ledger.KeyRecordIndex.
func KeyRecordIndex(payer AccountID, height int64, requestDigest Hash32) []byte {
	return ledger.KeyRecordIndex(payer, height, requestDigest)
}

// KeyValidator is ledger.KeyValidator.
func KeyValidator(op AccountID) []byte { return ledger.KeyValidator(op) }

// NewSigner is ledger.NewSigner.
func NewSigner(priv ed25519.PrivateKey, chainID string) *Signer {
	return ledger.NewSigner(priv, chainID)
}

// ParseAccountID is ledger.ParseAccountID.
func ParseAccountID(s string) (AccountID, error) { return ledger.ParseAccountID(s) }

// ParseAppGenesis is ledger.ParseAppGenesis.
func ParseAppGenesis(b []byte) (AppGenesis, error) { return ledger.ParseAppGenesis(b) }

// RecordIndexRange is ledger.RecordIndexRange.
func RecordIndexRange(payer AccountID, from, to int64) (first, last []byte) {
	return ledger.RecordIndexRange(payer, from, to)
}

// RecordIndexValue is ledger.RecordIndexValue.
func RecordIndexValue(encoded []byte) Hash32 { return ledger.RecordIndexValue(encoded) }

// SigningBytes is ledger.SigningBytes.
func SigningBytes(chainID string, body []byte) []byte { return ledger.SigningBytes(chainID, body) }

// TxHash is ledger.TxHash.
func TxHash(raw []byte) [32]byte { return ledger.TxHash(raw) }

// ParseHash is ledger.ParseHash.
func ParseHash(s string) (Hash32, error) { return ledger.ParseHash(s) }

// KeyStream is ledger.KeyStream.
func KeyStream(id Hash32) []byte { return ledger.KeyStream(id) }

// StreamID is ledger.StreamID.
func StreamID(signer AccountID, nonce uint64, payer, settler AccountID, payee identity.MachineID) Hash32 {
	return ledger.StreamID(signer, nonce, payer, settler, payee)
}

// KeyName is ledger.KeyName.
func KeyName(name string) []byte { return ledger.KeyName(name) }

// CheckName is ledger.CheckName.
func CheckName(name string) error { return ledger.CheckName(name) }

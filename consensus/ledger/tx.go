package ledger

import (
	"crypto/ed25519"

	"github.com/fxamacker/cbor/v2"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TxDomain starts the bytes every account signature covers.
const TxDomain = "tenzro/v1/tx"

// MaxTxBytes bounds an encoded transaction envelope.
const MaxTxBytes = 1 << 20

// MaxRecordsPerTx bounds the payment records of one settlement. 256, not
// the thousands of small records 1 MB would hold: each record the chain
// refuses after signature work costs validators ~0.3 ms of CPU, and a cap
// bounds what one transaction (checked before its record fees are known)
// makes every validator do; honest submitters batch within it.
const MaxRecordsPerTx = 256

// Kind names a transaction type.
type Kind uint16

// Transaction kinds.
const (
	KindTransfer         Kind = 1
	KindValidatorStake   Kind = 2
	KindValidatorUnstake Kind = 3
	KindProviderRegister Kind = 4
	KindProviderUnbond   Kind = 5
	KindProviderWithdraw Kind = 6
	KindParamProposal    Kind = 7
	KindParamVote        Kind = 8
	KindEscrowFund       Kind = 9
	KindEscrowWithdraw   Kind = 10
	KindSettlement       Kind = 11
	KindSLAVerdict       Kind = 12
	KindNameBind         Kind = 13
	KindNameProposal     Kind = 14
	KindEscrowClaim      Kind = 15
	KindStreamOpen       Kind = 16
	KindStreamClaim      Kind = 17
	KindStreamStop       Kind = 18
	KindPlanOpen         Kind = 19
	KindPlanDecide       Kind = 20
	KindModelDeclare     Kind = 21
	KindDisputeOpen      Kind = 22
	KindDisputeVote      Kind = 23
	KindProviderRebond   Kind = 24
	kindEnd                   = 25
)

// Envelope is the wire form of a transaction: the canonical CBOR of a
// TxBody and the signer's Ed25519 signature over SigningBytes.
type Envelope struct {
	Body []byte `cbor:"1,keyasint"`
	Sig  []byte `cbor:"2,keyasint"`
}

// TxBody is what a signature covers besides the domain and chain ID.
type TxBody struct {
	Signer  terms.AccountID `cbor:"1,keyasint"`
	Nonce   uint64          `cbor:"2,keyasint"`
	Kind    Kind            `cbor:"3,keyasint"`
	Payload cbor.RawMessage `cbor:"4,keyasint"`
}

// Tx is a decoded, signature-checked transaction.
type Tx struct {
	Body    TxBody
	Payload any // one of the *Kind payload types below
	Hash    [32]byte
}

// SigningBytes returns TxDomain ‖ 0x00 ‖ uvarint(len(chainID)) ‖ chainID ‖ body.
func SigningBytes(chainID string, body []byte) []byte {
	out := make([]byte, 0, len(TxDomain)+1+10+len(chainID)+len(body))
	out = append(out, TxDomain...)
	out = append(out, 0)
	out = appendUvarint(out, uint64(len(chainID)))
	out = append(out, chainID...)
	return append(out, body...)
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// newPayload returns a pointer to the zero payload of kind k.
func newPayload(k Kind) (any, bool) {
	switch k {
	case KindTransfer:
		return &Transfer{}, true
	case KindValidatorStake:
		return &ValidatorStake{}, true
	case KindValidatorUnstake:
		return &ValidatorUnstake{}, true
	case KindProviderRegister:
		return &ProviderRegister{}, true
	case KindProviderUnbond:
		return &ProviderUnbond{}, true
	case KindProviderWithdraw:
		return &ProviderWithdraw{}, true
	case KindParamProposal:
		return &ParamProposal{}, true
	case KindParamVote:
		return &ParamVote{}, true
	case KindEscrowFund:
		return &EscrowFund{}, true
	case KindEscrowWithdraw:
		return &EscrowWithdraw{}, true
	case KindSettlement:
		return &Settlement{}, true
	case KindSLAVerdict:
		return &SLAVerdict{}, true
	case KindNameBind:
		return &NameBind{}, true
	case KindNameProposal:
		return &NameProposal{}, true
	case KindEscrowClaim:
		return &EscrowClaim{}, true
	case KindStreamOpen:
		return &StreamOpen{}, true
	case KindStreamClaim:
		return &StreamClaim{}, true
	case KindStreamStop:
		return &StreamStop{}, true
	case KindPlanOpen:
		return &PlanOpen{}, true
	case KindPlanDecide:
		return &PlanDecide{}, true
	case KindModelDeclare:
		return &ModelDeclare{}, true
	case KindDisputeOpen:
		return &DisputeOpen{}, true
	case KindDisputeVote:
		return &DisputeVote{}, true
	case KindProviderRebond:
		return &ProviderRebond{}, true
	}
	return nil, false
}

// kindOf returns the kind of a payload value.
func kindOf(p any) (Kind, bool) {
	switch p.(type) {
	case *Transfer:
		return KindTransfer, true
	case *ValidatorStake:
		return KindValidatorStake, true
	case *ValidatorUnstake:
		return KindValidatorUnstake, true
	case *ProviderRegister:
		return KindProviderRegister, true
	case *ProviderUnbond:
		return KindProviderUnbond, true
	case *ProviderWithdraw:
		return KindProviderWithdraw, true
	case *ParamProposal:
		return KindParamProposal, true
	case *ParamVote:
		return KindParamVote, true
	case *EscrowFund:
		return KindEscrowFund, true
	case *EscrowWithdraw:
		return KindEscrowWithdraw, true
	case *Settlement:
		return KindSettlement, true
	case *SLAVerdict:
		return KindSLAVerdict, true
	case *NameBind:
		return KindNameBind, true
	case *NameProposal:
		return KindNameProposal, true
	case *EscrowClaim:
		return KindEscrowClaim, true
	case *StreamOpen:
		return KindStreamOpen, true
	case *StreamClaim:
		return KindStreamClaim, true
	case *StreamStop:
		return KindStreamStop, true
	case *PlanOpen:
		return KindPlanOpen, true
	case *PlanDecide:
		return KindPlanDecide, true
	case *ModelDeclare:
		return KindModelDeclare, true
	case *DisputeOpen:
		return KindDisputeOpen, true
	case *DisputeVote:
		return KindDisputeVote, true
	case *ProviderRebond:
		return KindProviderRebond, true
	}
	return 0, false
}

// DecodeTx parses and authenticates raw transaction bytes for chainID: the
// envelope, body and payload must each be canonical CBOR, the payload must
// pass its stateless checks and the signatures must verify. Failures are
// *TxError with CodeTooLarge, CodeMalformed, CodeBadSignature or a
// payload's own stateless code (CodeBadIdentity, CodeBadHWSig, ...).
func DecodeTx(chainID string, raw []byte) (*Tx, error) {
	if len(raw) > MaxTxBytes {
		return nil, reject(CodeTooLarge, "transaction is %d bytes, limit %d", len(raw), MaxTxBytes)
	}
	var env Envelope
	if err := cborx.UnmarshalCanonical(raw, MaxTxBytes, &env); err != nil {
		return nil, reject(CodeMalformed, "envelope: %v", err)
	}
	if len(env.Sig) != ed25519.SignatureSize {
		return nil, reject(CodeMalformed, "signature is %d bytes, want %d", len(env.Sig), ed25519.SignatureSize)
	}
	var body TxBody
	if err := cborx.UnmarshalCanonical(env.Body, MaxTxBytes, &body); err != nil {
		return nil, reject(CodeMalformed, "body: %v", err)
	}
	p, ok := newPayload(body.Kind)
	if !ok {
		return nil, reject(CodeMalformed, "unknown transaction kind %d", body.Kind)
	}
	if err := cborx.UnmarshalCanonical(body.Payload, MaxTxBytes, p); err != nil {
		return nil, reject(CodeMalformed, "kind %d payload: %v", body.Kind, err)
	}
	if v, ok := p.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, err
		}
	}
	if !ed25519.Verify(ed25519.PublicKey(body.Signer[:]), SigningBytes(chainID, env.Body), env.Sig) {
		return nil, reject(CodeBadSignature, "signature by %s does not verify for chain %q", body.Signer, chainID)
	}
	// Payload signatures (a registration's machine and peer keys) cover the
	// chain and the signer, so they are checked once those are known.
	if a, ok := p.(interface {
		authenticate(chainID string, signer terms.AccountID) error
	}); ok {
		if err := a.authenticate(chainID, body.Signer); err != nil {
			return nil, err
		}
	}
	return &Tx{Body: body, Payload: p, Hash: TxHash(raw)}, nil
}

package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TxHash is the hash CometBFT indexes a transaction by: SHA-256 of its bytes.
func TxHash(raw []byte) [32]byte { return sha256.Sum256(raw) }

// Transfer moves Amount micro-units from the signer to To.
type Transfer struct {
	To     terms.AccountID `cbor:"1,keyasint"`
	Amount uint64          `cbor:"2,keyasint"`
}

func (p *Transfer) validate() error { return nonZero("transfer amount", p.Amount) }

// ValidatorStake bonds Amount from the signer's balance as validator stake
// for the Ed25519 consensus key ConsPubKey; the first stake creates the
// validator. Power is stake / PowerUnit.
type ValidatorStake struct {
	ConsPubKey []byte `cbor:"1,keyasint"`
	Amount     uint64 `cbor:"2,keyasint"`
}

func (p *ValidatorStake) validate() error {
	if len(p.ConsPubKey) != ed25519.PublicKeySize {
		return reject(CodeMalformed, "consensus key is %d bytes, want %d", len(p.ConsPubKey), ed25519.PublicKeySize)
	}
	return nonZero("stake amount", p.Amount)
}

// ValidatorUnstake returns Amount of the signer's validator stake to its
// balance; a validator whose power falls to 0 leaves the set.
type ValidatorUnstake struct {
	Amount uint64 `cbor:"1,keyasint"`
}

func (p *ValidatorUnstake) validate() error { return nonZero("unstake amount", p.Amount) }

// ProviderRegister registers a machine with the signer as operator and
// bonds Bond from the signer's balance. HWSig, PQSig and PeerSig are the
// machine's hardware key, its ML-DSA-65 key and the libp2p peer key
// signing SigningPayload (chain ID, operator, machine ID, peer ID) through
// identity.SignRegistration and identity.SignRegistrationPeer: the
// machine and the peer consent to this operator registering them here.
type ProviderRegister struct {
	MachineID     identity.MachineID `cbor:"1,keyasint"`
	HWPubDER      []byte             `cbor:"2,keyasint"` // PKIX DER of the P-256 hardware key
	PQPub         []byte             `cbor:"3,keyasint"` // packed ML-DSA-65 public key
	PeerID        string             `cbor:"4,keyasint"` // libp2p peer ID
	Bond          uint64             `cbor:"5,keyasint"`
	UnbondingSecs uint64             `cbor:"6,keyasint"` // delay between unbond and withdraw
	HWSig         []byte             `cbor:"7,keyasint"` // ASN.1 ECDSA signature
	PQSig         []byte             `cbor:"8,keyasint"`
	PeerSig       []byte             `cbor:"9,keyasint"`
}

func (p *ProviderRegister) validate() error { return checkRegistration(p) }

func (p *ProviderRegister) authenticate(chainID string, signer terms.AccountID) error {
	return checkRegistrationSigs(p, chainID, signer)
}

// ProviderUnbond starts the unbonding of a provider's serving bond; its
// standing is 0 from then on.
type ProviderUnbond struct {
	MachineID identity.MachineID `cbor:"1,keyasint"`
}

// ProviderWithdraw returns an unbonded serving bond to the operator and
// removes the registration, once the unbonding delay has passed.
type ProviderWithdraw struct {
	MachineID identity.MachineID `cbor:"1,keyasint"`
}

// ProviderRebond adds Amount from the signer's balance to the serving
// bond of a machine it operates. A machine barred by a conviction is
// readmitted by a re-bond of at least what that conviction slashed
// (Provider.RebondDue) that leaves its bond at or above the serving
// minimum.
type ProviderRebond struct {
	MachineID identity.MachineID `cbor:"1,keyasint"`
	Amount    uint64             `cbor:"2,keyasint"`
}

func (p *ProviderRebond) validate() error { return nonZero("re-bond amount", p.Amount) }

// ParamProposal proposes replacing the governed parameters with Params. It
// counts as the proposer's yes vote.
type ParamProposal struct {
	Params Params `cbor:"1,keyasint"`
}

func (p *ParamProposal) validate() error { return p.Params.Validate() }

// ParamVote is a validator's vote on a proposal. Only yes votes count
// toward the > 2/3 threshold.
type ParamVote struct {
	ProposalID uint64 `cbor:"1,keyasint"`
	Approve    bool   `cbor:"2,keyasint"`
}

// EscrowFund moves Amount from the signer's balance into the escrow of
// (signer, Settler), opening it if needed. Settler is the account (a
// gateway) whose signed payment records draw on the escrow; zero means the
// signer itself.
type EscrowFund struct {
	Amount  uint64          `cbor:"1,keyasint"`
	Settler terms.AccountID `cbor:"2,keyasint"`
}

func (p *EscrowFund) validate() error { return nonZero("escrow amount", p.Amount) }

// EscrowWithdraw starts withdrawing Amount from the escrow of (signer,
// Settler): the amount stops being available to new records at once and
// pays out by EscrowClaim WithdrawDelayBlocks later. A further withdrawal
// adds to the pending amount and restarts the delay.
type EscrowWithdraw struct {
	Amount  uint64          `cbor:"1,keyasint"`
	Settler terms.AccountID `cbor:"2,keyasint"`
}

func (p *EscrowWithdraw) validate() error { return nonZero("withdraw amount", p.Amount) }

// EscrowClaim pays a pending withdrawal of the escrow of (signer, Settler)
// out to the signer once its unlock height is reached.
type EscrowClaim struct {
	Settler terms.AccountID `cbor:"1,keyasint"`
}

// Settlement applies a batch of payment records. Anyone may submit one:
// each record carries its settler's signature. Records failing a stateful
// check are skipped and reported (SettleReport), not a batch failure.
type Settlement struct {
	Records []receipt.PaymentRecord `cbor:"1,keyasint"`
}

func (p *Settlement) validate() error {
	if len(p.Records) == 0 {
		return reject(CodeMalformed, "settlement has no records")
	}
	if len(p.Records) > MaxRecordsPerTx {
		return reject(CodeTooLarge, "settlement has %d records, limit %d", len(p.Records), MaxRecordsPerTx)
	}
	for i := range p.Records {
		if p.Records[i].Price == 0 {
			return reject(CodeMalformed, "record %d has price 0", i)
		}
		if n := len(p.Records[i].Receipt); n > receipt.MaxReceiptBytes {
			return reject(CodeTooLarge, "record %d: receipt is %d bytes, limit %d", i, n, receipt.MaxReceiptBytes)
		}
		if n := len(p.Records[i].Sig); n > ed25519.SignatureSize {
			return reject(CodeMalformed, "record %d: signature is %d bytes, want %d", i, n, ed25519.SignatureSize)
		}
	}
	return nil
}

// SLAVerdict is a validator's finding on whether a provider was available
// during hour Hour (hours count from genesis time, HourSeconds long).
type SLAVerdict struct {
	MachineID identity.MachineID `cbor:"1,keyasint"`
	Hour      uint64             `cbor:"2,keyasint"`
	Available bool               `cbor:"3,keyasint"`
}

func nonZero(what string, v uint64) error {
	if v == 0 {
		return reject(CodeMalformed, "%s is 0", what)
	}
	return nil
}

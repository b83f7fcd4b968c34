package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// RecordDomain starts the bytes a settler's payment-record signature covers.
const RecordDomain = "tenzro/v1/payment-record"

// FeePoolAccount receives every fee. No key controls it: its ID is a hash,
// not an Ed25519 public key anyone holds, so it only accumulates until
// governance decides its use. Fees are integer micro-units, so the pool
// keeps the money invariant exact (Σ escrow debits = Σ operator credits +
// Σ record fees).
var FeePoolAccount = AccountID(sha256.Sum256([]byte("tenzro/v1/fee-pool")))

// recordBody is what a settler signs: the record without its signature and
// without the receipt envelope (the envelope is bound by ReceiptHash).
type recordBody struct {
	Payer         AccountID          `cbor:"1,keyasint"`
	Provider      identity.MachineID `cbor:"2,keyasint"`
	RequestDigest Hash32             `cbor:"3,keyasint"`
	QuoteDigest   Hash32             `cbor:"4,keyasint"`
	Price         uint64             `cbor:"5,keyasint"`
	ReceiptHash   Hash32             `cbor:"6,keyasint"`
	Settler       AccountID          `cbor:"8,keyasint"`
	Units         uint64             `cbor:"9,keyasint"`
	Time          int64              `cbor:"10,keyasint"`
	ExpiryHeight  int64              `cbor:"11,keyasint"`
}

// RecordSigningBytes returns RecordDomain ‖ 0x00 ‖ uvarint(len(chainID)) ‖
// chainID ‖ canonical CBOR of the record's signed fields.
func RecordSigningBytes(chainID string, r *PaymentRecord) ([]byte, error) {
	body, err := cborx.Marshal(recordBody{
		Payer: r.Payer, Provider: r.Provider, RequestDigest: r.RequestDigest, QuoteDigest: r.QuoteDigest,
		Price: r.Price, ReceiptHash: r.ReceiptHash, Settler: r.Settler, Units: r.Units, Time: r.Time,
		ExpiryHeight: r.ExpiryHeight,
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: encode record: %w", err)
	}
	out := make([]byte, 0, len(RecordDomain)+1+10+len(chainID)+len(body))
	out = append(out, RecordDomain...)
	out = append(out, 0)
	out = appendUvarint(out, uint64(len(chainID)))
	out = append(out, chainID...)
	return append(out, body...), nil
}

// SignRecord sets r.Settler to the account of priv and r.Sig to its
// signature over RecordSigningBytes.
func SignRecord(priv ed25519.PrivateKey, chainID string, r *PaymentRecord) error {
	r.Settler = AccountOf(priv.Public().(ed25519.PublicKey))
	b, err := RecordSigningBytes(chainID, r)
	if err != nil {
		return err
	}
	r.Sig = ed25519.Sign(priv, b)
	return nil
}

// ErrRecordSig is the failure of a record's settler signature.
var ErrRecordSig = errors.New("ledger: settler signature does not verify")

// VerifySig checks r.Sig against the key of r.Settler on chainID.
func (r *PaymentRecord) VerifySig(chainID string) error {
	if len(r.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrRecordSig, len(r.Sig), ed25519.SignatureSize)
	}
	b, err := RecordSigningBytes(chainID, r)
	if err != nil {
		return err
	}
	return r.verifySigBytes(chainID, b)
}

// verifySigBytes checks r.Sig over b, r's RecordSigningBytes for chainID.
func (r *PaymentRecord) verifySigBytes(chainID string, b []byte) error {
	if len(r.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrRecordSig, len(r.Sig), ed25519.SignatureSize)
	}
	if !ed25519.Verify(ed25519.PublicKey(r.Settler[:]), b, r.Sig) {
		return fmt.Errorf("%w: by settler %s for chain %q", ErrRecordSig, r.Settler, chainID)
	}
	return nil
}

package receipt

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordDomain starts the bytes a settler's payment-record signature covers.
const RecordDomain = "tenzro/v1/payment-record"

// MaxReceiptBytes bounds one receipt envelope carried by a payment record
// (a receipt envelope with its session certificate is about 7 KB).
const MaxReceiptBytes = 16 << 10

// ErrRecordSig is the failure of a record's settler signature.
var ErrRecordSig = errors.New("receipt: settler signature does not verify")

// PaymentRecord binds one served call to its price: it debits the escrow
// of (Payer, Settler) and credits the operator of Provider. The gateway
// signs it, the wire carries it to the provider, and the chain settles
// it; all of them share this one type so none needs the state machine to
// speak of a payment.
//
// Sig is Settler's Ed25519 signature over RecordSigningBytes (chain ID and
// every field but Sig and Receipt). Receipt is the provider's receipt
// envelope as received (an identity.Envelope of domain Domain): settlement
// checks that ReceiptHash is its SHA-256 and that it is signed by a
// session of the machine registered as Provider, valid at the block time.
// The envelope is not kept in state; the stored record says the check
// passed. A record settles at heights up to ExpiryHeight.
type PaymentRecord struct {
	Payer         terms.AccountID    `cbor:"1,keyasint" json:"payer"`
	Provider      identity.MachineID `cbor:"2,keyasint" json:"provider"`
	RequestDigest terms.Hash32       `cbor:"3,keyasint" json:"request_digest"`
	QuoteDigest   terms.Hash32       `cbor:"4,keyasint" json:"quote_digest"`
	Price         uint64             `cbor:"5,keyasint" json:"price"`
	ReceiptHash   terms.Hash32       `cbor:"6,keyasint" json:"receipt_hash"`
	Receipt       []byte             `cbor:"7,keyasint,omitempty" json:"receipt,omitempty"`
	Settler       terms.AccountID    `cbor:"8,keyasint" json:"settler"`
	Units         uint64             `cbor:"9,keyasint" json:"units"`
	Time          int64              `cbor:"10,keyasint" json:"time"` // unix seconds the settler signed
	ExpiryHeight  int64              `cbor:"11,keyasint" json:"expiry_height"`
	Sig           []byte             `cbor:"12,keyasint" json:"sig"`
}

// recordBody is what a settler signs: the record without its signature and
// without the receipt envelope (the envelope is bound by ReceiptHash).
type recordBody struct {
	Payer         terms.AccountID    `cbor:"1,keyasint"`
	Provider      identity.MachineID `cbor:"2,keyasint"`
	RequestDigest terms.Hash32       `cbor:"3,keyasint"`
	QuoteDigest   terms.Hash32       `cbor:"4,keyasint"`
	Price         uint64             `cbor:"5,keyasint"`
	ReceiptHash   terms.Hash32       `cbor:"6,keyasint"`
	Settler       terms.AccountID    `cbor:"8,keyasint"`
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
		return nil, fmt.Errorf("receipt: encode record: %w", err)
	}
	out := make([]byte, 0, len(RecordDomain)+1+binary.MaxVarintLen64+len(chainID)+len(body))
	out = append(out, RecordDomain...)
	out = append(out, 0)
	out = binary.AppendUvarint(out, uint64(len(chainID)))
	out = append(out, chainID...)
	return append(out, body...), nil
}

// RecordDigest is SHA-256 of the record's signing bytes: two records have
// one digest exactly when their settler signed the same fields (the
// receipt is bound by its hash).
func RecordDigest(chainID string, r *PaymentRecord) (terms.Hash32, error) {
	b, err := RecordSigningBytes(chainID, r)
	if err != nil {
		return terms.Hash32{}, err
	}
	return sha256.Sum256(b), nil
}

// SignRecord sets r.Settler to the account of priv and r.Sig to its
// signature over RecordSigningBytes.
func SignRecord(priv ed25519.PrivateKey, chainID string, r *PaymentRecord) error {
	r.Settler = terms.AccountOf(priv.Public().(ed25519.PublicKey))
	b, err := RecordSigningBytes(chainID, r)
	if err != nil {
		return err
	}
	r.Sig = ed25519.Sign(priv, b)
	return nil
}

// VerifySig checks r.Sig against the key of r.Settler on chainID.
func (r *PaymentRecord) VerifySig(chainID string) error {
	if len(r.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrRecordSig, len(r.Sig), ed25519.SignatureSize)
	}
	b, err := RecordSigningBytes(chainID, r)
	if err != nil {
		return err
	}
	return r.VerifySigBytes(chainID, b)
}

// VerifySigBytes checks r.Sig over b, r's RecordSigningBytes for chainID.
// It is exported for the ledger, which computes the signing bytes once per
// record to key its signature cache and should not encode them twice.
func (r *PaymentRecord) VerifySigBytes(chainID string, b []byte) error {
	if len(r.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrRecordSig, len(r.Sig), ed25519.SignatureSize)
	}
	if !ed25519.Verify(ed25519.PublicKey(r.Settler[:]), b, r.Sig) {
		return fmt.Errorf("%w: by settler %s for chain %q", ErrRecordSig, r.Settler, chainID)
	}
	return nil
}

package ledger

import (
	"crypto/ed25519"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Signer signs transactions for one account on one chain.
type Signer struct {
	priv    ed25519.PrivateKey
	chainID string
}

// NewSigner returns a signer for the account of priv on chainID.
func NewSigner(priv ed25519.PrivateKey, chainID string) *Signer {
	return &Signer{priv: priv, chainID: chainID}
}

// Account is the signer's account ID.
func (s *Signer) Account() terms.AccountID {
	return terms.AccountOf(s.priv.Public().(ed25519.PublicKey))
}

// SignTx encodes payload (a pointer to one of the payload types, e.g.
// *Transfer) with nonce and returns the signed transaction bytes.
func (s *Signer) SignTx(nonce uint64, payload any) ([]byte, error) {
	kind, ok := kindOf(payload)
	if !ok {
		return nil, fmt.Errorf("ledger: %T is not a transaction payload", payload)
	}
	p, err := cborx.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode payload: %w", err)
	}
	body, err := cborx.Marshal(TxBody{Signer: s.Account(), Nonce: nonce, Kind: kind, Payload: p})
	if err != nil {
		return nil, fmt.Errorf("ledger: encode body: %w", err)
	}
	sig := ed25519.Sign(s.priv, SigningBytes(s.chainID, body))
	raw, err := cborx.Marshal(Envelope{Body: body, Sig: sig})
	if err != nil {
		return nil, fmt.Errorf("ledger: encode envelope: %w", err)
	}
	return raw, nil
}

// SignRecord signs a payment record as its settler: it sets r.Settler to
// the signer's account and r.Sig to the signature for the signer's chain.
func (s *Signer) SignRecord(r *receipt.PaymentRecord) error {
	return receipt.SignRecord(s.priv, s.chainID, r)
}

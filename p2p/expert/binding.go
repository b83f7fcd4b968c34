package expert

import (
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// MaxBindingHashes bounds the receipts a Binding lists: what one dispute
// carries (ledger.MaxDisputeReceiptHashes). A call with more receipts at
// one holder cannot be disputed, so its binding is not kept.
const MaxBindingHashes = ledger.MaxDisputeReceiptHashes

// MaxBindingSize bounds an encoded Binding.
const MaxBindingSize = MaxBindingHashes*34 + 256

// Binding ties one signed holder receipt of a call to the payment record
// that paid the holder for the call: the record's payer and request
// digest, and the hash of every receipt of the call from that holder in
// order (whose ledger.ReceiptsHash is the record's quote digest). A
// dispute over a batch of the receipt names that record and lists those
// hashes (Evidence.DisputeOpen); the serving provider keeps one per
// sampled receipt, written before the record is signed.
type Binding struct {
	Payer         terms.AccountID `cbor:"1,keyasint" json:"payer"`
	RequestDigest terms.Hash32    `cbor:"2,keyasint" json:"request_digest"`
	ReceiptHashes []terms.Hash32  `cbor:"3,keyasint" json:"receipt_hashes"`
}

// Check validates b: at least one receipt, at most MaxBindingHashes.
func (b *Binding) Check() error {
	if len(b.ReceiptHashes) == 0 || len(b.ReceiptHashes) > MaxBindingHashes {
		return fmt.Errorf("%w: binding of %d receipt hashes, want 1..%d", ErrMalformed, len(b.ReceiptHashes), MaxBindingHashes)
	}
	return nil
}

// Binds reports whether b lists the receipt with this hash.
func (b *Binding) Binds(receiptHash terms.Hash32) bool {
	return slices.Contains(b.ReceiptHashes, receiptHash)
}

// EncodeBinding encodes b as canonical CBOR.
func EncodeBinding(b *Binding) ([]byte, error) { return encodeChecked(b, MaxBindingSize) }

// DecodeBinding strictly decodes and checks a binding.
func DecodeBinding(data []byte) (*Binding, error) {
	return cborx.UnmarshalChecked(data, MaxBindingSize, ErrMalformed, (*Binding).Check)
}

// BindingOf is the binding of a holder's usage for a call to the record
// paying it (payer, request digest).
func BindingOf(u *HolderUsage, payer terms.AccountID, requestDigest terms.Hash32) *Binding {
	return &Binding{Payer: payer, RequestDigest: requestDigest, ReceiptHashes: u.ReceiptHashes()}
}

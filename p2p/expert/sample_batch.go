package expert

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// MaxSampleSize bounds an encoded SampledBatch: one batch's input and
// output rows and the receipt covering its exchange.
const MaxSampleSize = 2*MaxRequestSize + MaxReceiptSize + 4096

// SampledBatch is one verified batch stored in full for re-execution: the
// exact input bytes sent, the exact output bytes the holder returned and
// the holder's signed receipt (the full envelope) whose entry Index
// commits to both.
type SampledBatch struct {
	Model     [32]byte `cbor:"1,keyasint" json:"model"`
	Layer     uint32   `cbor:"2,keyasint" json:"layer"`
	Dim       uint32   `cbor:"3,keyasint" json:"dim"`
	Expert    uint32   `cbor:"4,keyasint" json:"expert"`
	Positions []uint32 `cbor:"5,keyasint" json:"positions"`
	Input     []byte   `cbor:"6,keyasint" json:"input"`
	Output    []byte   `cbor:"7,keyasint" json:"output"`
	Receipt   []byte   `cbor:"8,keyasint" json:"receipt"`
	Index     uint32   `cbor:"9,keyasint" json:"index"`
	Holder    []byte   `cbor:"10,keyasint" json:"holder"`  // the holder's peer ID bytes
	Machine   [32]byte `cbor:"11,keyasint" json:"machine"` // the holder's machine ID
}

// Check validates b's shape and that its receipt's entry Index names
// exactly its expert, positions, input and output: a stored batch is
// self-contained evidence of what the holder signed. It does not verify
// the signature (that needs the holder's certificate chain; Verify).
func (b *SampledBatch) Check() error {
	switch {
	case b.Dim == 0 || b.Dim > MaxDim:
		return fmt.Errorf("%w: sample dim %d outside 1..%d", ErrMalformed, b.Dim, MaxDim)
	case len(b.Positions) == 0 || len(b.Positions) > MaxRows:
		return fmt.Errorf("%w: sample with %d positions", ErrMalformed, len(b.Positions))
	case len(b.Input) != len(b.Positions)*int(b.Dim)*4 || len(b.Output) != len(b.Input):
		return fmt.Errorf("%w: sample rows of %d and %d bytes for %d positions of %d values",
			ErrMalformed, len(b.Input), len(b.Output), len(b.Positions), b.Dim)
	case len(b.Receipt) == 0 || len(b.Receipt) > MaxReceiptSize:
		return fmt.Errorf("%w: sample receipt of %d bytes", ErrMalformed, len(b.Receipt))
	}
	_, r, err := DecodeReceipt(b.Receipt)
	if err != nil {
		return err
	}
	if !slices.Equal(r.Machine, b.Machine[:]) || !slices.Equal(r.Peer, b.Holder) {
		return fmt.Errorf("%w: sample names another holder than its receipt", ErrWrongSigner)
	}
	if int(b.Index) >= len(r.Entries) {
		return fmt.Errorf("%w: sample index %d of a receipt with %d entries", ErrMalformed, b.Index, len(r.Entries))
	}
	e := &r.Entries[b.Index]
	switch {
	case r.Model != b.Model || r.Layer != b.Layer || e.Expert != b.Expert || !slices.Equal(e.Positions, b.Positions):
		return fmt.Errorf("%w: sample names another batch than its receipt", ErrInputMismatch)
	case e.InputHash != sha256.Sum256(b.Input):
		return fmt.Errorf("%w: sample input differs from its receipt", ErrInputMismatch)
	case e.OutputHash != sha256.Sum256(b.Output):
		return fmt.Errorf("%w: sample output differs from its receipt", ErrOutputMismatch)
	}
	return nil
}

// ID names a stored batch: the receipt envelope's hash and the index.
func (b *SampledBatch) ID() [32]byte {
	h := sha256.New()
	h.Write(b.Receipt)
	h.Write([]byte{byte(b.Index >> 24), byte(b.Index >> 16), byte(b.Index >> 8), byte(b.Index)})
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Ref is the ledger's name for the batch a dispute is about.
func (b *SampledBatch) Ref() ledger.ExpertBatchRef {
	return ledger.ExpertBatchRef{Holder: b.Machine, Model: b.Model, Layer: b.Layer, Expert: b.Expert, ReceiptHash: Hash(b.Receipt)}
}

// EncodeSampledBatch encodes b as canonical CBOR.
func EncodeSampledBatch(b *SampledBatch) ([]byte, error) { return encodeChecked(b, MaxSampleSize) }

// DecodeSampledBatch strictly decodes and checks a stored batch.
func DecodeSampledBatch(data []byte) (*SampledBatch, error) {
	return cborx.UnmarshalChecked(data, MaxSampleSize, ErrMalformed, (*SampledBatch).Check)
}

package expert

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ReceiptHashes is the SHA-256 of each receipt of the holder's usage, in
// order: what a dispute over one of its batches lists so the chain can
// check them against the payment record's quote digest (ReceiptsHash is
// ledger.ReceiptsHash of this list).
func (u *HolderUsage) ReceiptHashes() []terms.Hash32 {
	out := make([]terms.Hash32, len(u.Receipts))
	for i, r := range u.Receipts {
		out[i] = sha256.Sum256(r)
	}
	return out
}

// DisputeOpen is the transaction disputing e's batch with bond: the
// subject names the settled payment record (payer, request digest) that
// paid the holder for the call, and receiptHashes are every receipt of
// that call from the holder in order (HolderUsage.ReceiptHashes of the
// call's tally), which the record's quote digest hashes. It refuses what
// the chain would: a list not holding the batch's receipt, or a batch
// larger than a dispute carries.
func (e *Evidence) DisputeOpen(payer terms.AccountID, requestDigest terms.Hash32, receiptHashes []terms.Hash32, bond uint64) (*ledger.DisputeOpen, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	ref := e.Ref()
	b := &e.Batch
	switch {
	case !slices.Contains(receiptHashes, ref.ReceiptHash):
		return nil, fmt.Errorf("expert: dispute: the batch's receipt %s is not among the call's %d receipts", ref.ReceiptHash, len(receiptHashes))
	case len(receiptHashes) > ledger.MaxDisputeReceiptHashes:
		return nil, fmt.Errorf("expert: dispute: a call of %d receipts, the chain takes %d", len(receiptHashes), ledger.MaxDisputeReceiptHashes)
	case len(b.Input) > ledger.MaxDisputeRowBytes:
		return nil, fmt.Errorf("expert: dispute: a batch of %d bytes, the chain takes %d", len(b.Input), ledger.MaxDisputeRowBytes)
	}
	return &ledger.DisputeOpen{
		Subject: ledger.DisputeSubject{Kind: ledger.SubjectExpertBatch, Payer: payer, RequestDigest: requestDigest, Batch: &ref},
		Evidence: ledger.DisputeEvidence{Receipt: b.Receipt, ReceiptHashes: receiptHashes, Entry: b.Index, Rows: b.Input, Output: b.Output,
			Reason: fmt.Sprintf("recomputed output %x differs", e.RecomputedHash[:8])},
		Bond: bond,
	}, nil
}

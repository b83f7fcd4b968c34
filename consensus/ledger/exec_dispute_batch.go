package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"time"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ReceiptsHash is SHA-256 over the list of receipt hashes in order: the
// quote digest of an expert payment record (p2p/expert
// HolderUsage.ReceiptsHash over the receipts themselves).
func ReceiptsHash(hashes []terms.Hash32) terms.Hash32 {
	h := sha256.New()
	for _, x := range hashes {
		h.Write(x[:])
	}
	var out terms.Hash32
	h.Sum(out[:0])
	return out
}

// checkBatchEvidence checks that the evidence is a batch the accused
// holder signed and was paid for by rec, and returns the batch's model:
//
//   - the record pays the batch's holder machine;
//   - the receipt hashes list hashes to the record's quote digest (which
//     the payer signed) and holds the disputed receipt's hash: only an
//     expert payment record's quote digest is such a list's hash (any
//     other is a quote's, and matching one would take a preimage);
//   - the disputed receipt hashes to Batch.ReceiptHash, is an expert
//     receipt of Batch's model and layer naming the holder, its entry
//     names Batch's expert, and the rows hash to what the entry signs;
//   - the receipt is the holder's own: its session certificate chains to
//     the holder machine and was valid when the receipt says it was
//     signed (not after this block), and the session signature verifies.
//     The payer's signature alone would not do: the payer is the holder's
//     client and may be the disputer.
//
// A certificate valid at the receipt's own time, not the block's, is what
// lets a batch be disputed after the holder's session rotated.
func (r *txRun) checkBatchEvidence(rec *SettledRecord, ref *ExpertBatchRef, e *DisputeEvidence) (terms.Hash32, error) {
	var model terms.Hash32
	if ref.Holder != rec.Record.Provider {
		return model, reject(CodeWrongMachine, "batch holder %s is not the record's provider %s", ref.Holder, rec.Record.Provider)
	}
	if got := ReceiptsHash(e.ReceiptHashes); got != rec.Record.QuoteDigest {
		return model, reject(CodeBadEvidence, "%d receipt hashes hash to %s, the record's quote digest is %s", len(e.ReceiptHashes), got, rec.Record.QuoteDigest)
	}
	if !slices.Contains(e.ReceiptHashes, ref.ReceiptHash) {
		return model, reject(CodeBadEvidence, "receipt %s is not among the record's %d receipts", ref.ReceiptHash, len(e.ReceiptHashes))
	}
	if got := terms.Hash32(sha256.Sum256(e.Receipt)); got != ref.ReceiptHash {
		return model, reject(CodeBadEvidence, "receipt hashes to %s, the batch names %s", got, ref.ReceiptHash)
	}
	env, er, err := ParseExpertReceipt(e.Receipt)
	if err != nil {
		return model, reject(CodeBadReceipt, "disputed batch: %v", err)
	}
	switch {
	case !bytes.Equal(er.Machine, ref.Holder[:]) || !bytes.Equal(env.Cert.MachineID, ref.Holder[:]):
		return model, reject(CodeWrongMachine, "expert receipt names machine %x (certificate %x), the batch's holder is %s", er.Machine, env.Cert.MachineID, ref.Holder)
	case !bytes.Equal(er.Peer, env.Cert.PeerID):
		return model, reject(CodeWrongMachine, "expert receipt names another peer than its certificate")
	case er.Model != ref.Model || er.Layer != ref.Layer:
		return model, reject(CodeBadEvidence, "expert receipt is for model %x layer %d, the batch names %s layer %d", er.Model, er.Layer, ref.Model, ref.Layer)
	case int(e.Entry) >= len(er.Entries):
		return model, reject(CodeBadEvidence, "batch entry %d of a receipt with %d entries", e.Entry, len(er.Entries))
	}
	ent := &er.Entries[e.Entry]
	switch {
	case ent.Expert != ref.Expert:
		return model, reject(CodeBadEvidence, "receipt entry %d is expert %d, the batch names %d", e.Entry, ent.Expert, ref.Expert)
	case len(ent.Positions) == 0 || len(e.Rows)%(4*len(ent.Positions)) != 0:
		return model, reject(CodeBadEvidence, "%d input bytes are not %d whole float32 rows", len(e.Rows), len(ent.Positions))
	case sha256.Sum256(e.Rows) != ent.InputHash:
		return model, reject(CodeBadEvidence, "input rows hash to %x, the receipt signs %x", sha256.Sum256(e.Rows), ent.InputHash)
	case sha256.Sum256(e.Output) != ent.OutputHash:
		return model, reject(CodeBadEvidence, "output rows hash to %x, the receipt signs %x", sha256.Sum256(e.Output), ent.OutputHash)
	case er.TimeMs > r.blk.Time*1000+identity.ClockSkew.Milliseconds():
		return model, reject(CodeBadReceipt, "expert receipt dated %d ms, after the block", er.TimeMs)
	}
	certErr := env.Cert.Verify(ref.Holder, time.UnixMilli(er.TimeMs))
	switch {
	case errors.Is(certErr, identity.ErrMachineMismatch):
		return model, reject(CodeWrongMachine, "expert receipt signed by machine %x, holder is %s", env.Cert.MachineID, ref.Holder)
	case certErr != nil:
		return model, reject(CodeBadReceipt, "expert receipt's session certificate: %v", certErr)
	}
	if err := env.VerifySignature(); err != nil {
		return model, reject(CodeBadReceipt, "expert receipt: %v", err)
	}
	return ref.Model, nil
}

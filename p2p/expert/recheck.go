package expert

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// MaxEvidenceSize bounds an encoded Evidence: the batch, plus the
// recomputing holder's receipt.
const MaxEvidenceSize = MaxSampleSize + MaxReceiptSize + 1024

// Evidence is what re-executing a stored batch found when the output
// differed from what its holder signed: the batch in full (model, layer,
// expert, positions, input rows, the output rows and the holder's signed
// receipt committing to them) and the hash of the output recomputed by
// another holder of the expert (with that holder's own signed receipt) or
// by this node from its own copy of the weights. It is what a dispute over
// the batch (ledger.SubjectExpertBatch, Ref) carries.
type Evidence struct {
	Batch          SampledBatch `cbor:"1,keyasint" json:"batch"`
	InputHash      [32]byte     `cbor:"2,keyasint" json:"input_hash"`
	ClaimedHash    [32]byte     `cbor:"3,keyasint" json:"claimed_hash"`
	RecomputedHash [32]byte     `cbor:"4,keyasint" json:"recomputed_hash"`
	// RecomputedBy is the peer that recomputed; RecomputeReceipt its
	// verified receipt over the recomputed rows (empty when this node
	// recomputed with its own weights).
	RecomputedBy     []byte `cbor:"5,keyasint" json:"recomputed_by"`
	RecomputeReceipt []byte `cbor:"6,keyasint,omitempty" json:"recompute_receipt,omitempty"`
	TimeMs           int64  `cbor:"7,keyasint" json:"time_ms"`
}

// Ref names the disputed batch as the ledger does.
func (e *Evidence) Ref() ledger.ExpertBatchRef { return e.Batch.Ref() }

// Check validates e: a well-formed batch, hashes that are the batch's,
// and a recomputed output that differs from the claimed one.
func (e *Evidence) Check() error {
	if err := e.Batch.Check(); err != nil {
		return err
	}
	switch {
	case e.InputHash != sha256.Sum256(e.Batch.Input) || e.ClaimedHash != sha256.Sum256(e.Batch.Output):
		return fmt.Errorf("%w: evidence hashes are not its batch's", ErrMalformed)
	case e.RecomputedHash == e.ClaimedHash:
		return fmt.Errorf("%w: evidence recomputed the claimed output", ErrMalformed)
	case len(e.RecomputedBy) == 0 || len(e.RecomputedBy) > 128 || len(e.RecomputeReceipt) > MaxReceiptSize:
		return fmt.Errorf("%w: evidence recomputer of %d bytes, receipt of %d", ErrMalformed, len(e.RecomputedBy), len(e.RecomputeReceipt))
	}
	return nil
}

// EncodeEvidence encodes e as canonical CBOR.
func EncodeEvidence(e *Evidence) ([]byte, error) { return encodeChecked(e, MaxEvidenceSize) }

// DecodeEvidence strictly decodes and checks evidence.
func DecodeEvidence(b []byte) (*Evidence, error) {
	return cborx.UnmarshalChecked(b, MaxEvidenceSize, ErrMalformed, (*Evidence).Check)
}

// Redone is a batch computed again: the output bytes, who computed them
// and, for another holder, that holder (to be paid for the work at its
// price) and its verified receipt over them.
type Redone struct {
	Output  []byte
	By      peer.ID
	Holder  Holder
	Receipt []byte
}

// Redoer computes a stored batch again.
type Redoer interface {
	Redo(ctx context.Context, b *SampledBatch) (Redone, error)
}

// LocalRedo recomputes with this node's own verified copy of the expert
// (a node that holds the weights itself).
type LocalRedo struct {
	Computer Computer
	Self     peer.ID
}

// Redo implements Redoer.
func (l LocalRedo) Redo(ctx context.Context, b *SampledBatch) (Redone, error) {
	in, err := UnpackRows(b.Input, int(b.Dim))
	if err != nil {
		return Redone{}, err
	}
	out, err := l.Computer.Compute(ctx, b.Model, int(b.Layer), int(b.Expert), in)
	if err != nil {
		return Redone{}, fmt.Errorf("expert: recompute: %w", err)
	}
	packed, err := PackRows(out, int(b.Dim))
	if err != nil {
		return Redone{}, err
	}
	return Redone{Output: packed, By: l.Self}, nil
}

// Redo sends a stored batch of the caller's model to another holder of
// its expert (never the holder that answered it, nor its machine), first
// choice first, and returns the first verified answer. Failures here do
// not count in the breaker: re-execution is the caller's own business.
func (c *Caller) Redo(ctx context.Context, b *SampledBatch) (Redone, error) {
	if b.Model != c.cfg.Model || int(b.Dim) != c.cfg.Dim {
		return Redone{}, fmt.Errorf("expert: redo: batch of model %x dim %d at a caller of %x dim %d", b.Model[:4], b.Dim, c.cfg.Model[:4], c.cfg.Dim)
	}
	wire := []WireBatch{{Expert: b.Expert, Positions: b.Positions, Rows: b.Input}}
	var errs []error
	for _, h := range c.table.Holders(c.cfg.Model, int(b.Layer), int(b.Expert)) {
		if h.Peer == peer.ID(b.Holder) || h.Machine == b.Machine || h.Machine.IsZero() {
			continue
		}
		o := c.exchange(ctx, int(b.Layer), &group{holder: h, idx: []int{0}}, wire)
		if o.err == nil {
			c.stats.redoTokens.Add(uint64(len(b.Positions)))
			return Redone{Output: o.outputs[0], By: h.Peer, Holder: h, Receipt: o.receipt}, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", h.Peer, o.err))
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return Redone{}, fmt.Errorf("%w: no other holder of layer %d expert %d to recompute", ErrNoHolder, b.Layer, b.Expert)
	}
	return Redone{}, fmt.Errorf("expert: redo: %w", errors.Join(errs...))
}

// Recheck recomputes b with r and returns evidence when the output
// differs from what the holder signed beyond Tolerance (what a committee
// convicts on), nil when it is the same computation: bit-identical, or
// apart only by rounding.
func Recheck(ctx context.Context, b *SampledBatch, r Redoer, now time.Time) (*Evidence, error) {
	got, err := r.Redo(ctx, b)
	if err != nil {
		return nil, err
	}
	claimed, recomputed := sha256.Sum256(b.Output), sha256.Sum256(got.Output)
	if claimed == recomputed {
		return nil, nil
	}
	claimedRows, err := UnpackRows(b.Output, int(b.Dim))
	if err != nil {
		return nil, fmt.Errorf("expert: recheck: claimed rows: %w", err)
	}
	redoneRows, err := UnpackRows(got.Output, int(b.Dim))
	if err != nil {
		return nil, fmt.Errorf("expert: recheck: recomputed rows: %w", err)
	}
	if worst, _ := Deviation(claimedRows, redoneRows); worst <= Tolerance {
		return nil, nil
	}
	return &Evidence{Batch: *b, InputHash: sha256.Sum256(b.Input), ClaimedHash: claimed, RecomputedHash: recomputed,
		RecomputedBy: slices.Clone([]byte(got.By)), RecomputeReceipt: got.Receipt, TimeMs: now.UnixMilli()}, nil
}

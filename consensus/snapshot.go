package consensus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// ListSnapshots offers the ledger's finished snapshots to peers that
// state-sync.
func (a *App) ListSnapshots(context.Context, *abci.ListSnapshotsRequest) (*abci.ListSnapshotsResponse, error) {
	ms, err := a.l.Snapshots()
	if err != nil {
		return nil, fmt.Errorf("consensus: list snapshots: %w", err)
	}
	resp := &abci.ListSnapshotsResponse{}
	for _, m := range ms {
		if len(m.Chunks) > math.MaxUint32 {
			continue
		}
		resp.Snapshots = append(resp.Snapshots, &abci.Snapshot{
			Height:   uint64(m.Height), //nolint:gosec // a listed snapshot's height decoded as positive
			Format:   ledger.SnapshotFormat,
			Chunks:   uint32(len(m.Chunks)), //nolint:gosec // bounded above
			Hash:     m.Hash(),
			Metadata: m.Encode(),
		})
	}
	return resp, nil
}

// LoadSnapshotChunk serves one chunk of a listed snapshot; an unknown one
// answers empty, which CometBFT takes as "not here".
func (a *App) LoadSnapshotChunk(_ context.Context, req *abci.LoadSnapshotChunkRequest) (*abci.LoadSnapshotChunkResponse, error) {
	if req.Format != ledger.SnapshotFormat || req.Height > math.MaxInt64 {
		return &abci.LoadSnapshotChunkResponse{}, nil
	}
	b, err := a.l.SnapshotChunk(int64(req.Height), req.Chunk)
	if err != nil {
		a.log.Debug("consensus: snapshot chunk not served", "height", req.Height, "chunk", req.Chunk, "err", err)
		return &abci.LoadSnapshotChunkResponse{}, nil
	}
	return &abci.LoadSnapshotChunkResponse{Chunk: b}, nil
}

// OfferSnapshot accepts a snapshot to restore when its format is known,
// its metadata decodes and agrees with the snapshot's height, chunk count
// and hash, and it is of the app hash CometBFT's light client trusts.
func (a *App) OfferSnapshot(_ context.Context, req *abci.OfferSnapshotRequest) (*abci.OfferSnapshotResponse, error) {
	reject := func(r abci.OfferSnapshotResult, why string, args ...any) (*abci.OfferSnapshotResponse, error) {
		a.log.Warn("consensus: snapshot refused: "+why, args...)
		return &abci.OfferSnapshotResponse{Result: r}, nil
	}
	s := req.Snapshot
	if s == nil {
		return reject(abci.OFFER_SNAPSHOT_RESULT_REJECT, "none offered")
	}
	if s.Format != ledger.SnapshotFormat {
		return reject(abci.OFFER_SNAPSHOT_RESULT_REJECT_FORMAT, "unknown format", "format", s.Format)
	}
	m, err := ledger.DecodeSnapshotMeta(s.Metadata)
	switch {
	case err != nil:
		return reject(abci.OFFER_SNAPSHOT_RESULT_REJECT, "bad metadata", "height", s.Height, "err", err)
	case uint64(m.Height) != s.Height || uint64(len(m.Chunks)) != uint64(s.Chunks) || !bytes.Equal(m.Hash(), s.Hash): //nolint:gosec // decoded heights are positive
		return reject(abci.OFFER_SNAPSHOT_RESULT_REJECT, "metadata disagrees with the snapshot", "height", s.Height)
	case !bytes.Equal(m.AppHash[:], req.AppHash):
		return reject(abci.OFFER_SNAPSHOT_RESULT_REJECT, "not of the trusted app hash", "height", s.Height)
	}
	r, err := a.l.BeginRestore(m)
	if err != nil {
		return reject(abci.OFFER_SNAPSHOT_RESULT_ABORT, "cannot restore", "err", err)
	}
	a.snapMu.Lock()
	a.restore = r
	a.synced = restoreProgress{height: m.Height, chunks: len(m.Chunks)}
	a.snapMu.Unlock()
	a.log.Info("consensus: restoring snapshot", "height", m.Height, "chunks", len(m.Chunks))
	return &abci.OfferSnapshotResponse{Result: abci.OFFER_SNAPSHOT_RESULT_ACCEPT}, nil
}

// ApplySnapshotChunk applies the next chunk of the accepted snapshot. A
// chunk that does not match its hash is fetched again and its sender
// refused; a chunk that matches but does not apply, or a last chunk that
// leaves a root other than the trusted app hash, rejects the snapshot.
func (a *App) ApplySnapshotChunk(_ context.Context, req *abci.ApplySnapshotChunkRequest) (*abci.ApplySnapshotChunkResponse, error) {
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	if a.restore == nil {
		return &abci.ApplySnapshotChunkResponse{Result: abci.APPLY_SNAPSHOT_CHUNK_RESULT_ABORT}, nil
	}
	done, err := a.restore.Apply(int(req.Index), req.Chunk)
	switch {
	case errors.Is(err, ledger.ErrSnapshotChunk):
		a.log.Warn("consensus: snapshot chunk refused", "chunk", req.Index, "sender", req.Sender, "err", err)
		a.synced.refused++
		resp := &abci.ApplySnapshotChunkResponse{Result: abci.APPLY_SNAPSHOT_CHUNK_RESULT_RETRY, RefetchChunks: []uint32{req.Index}}
		if req.Sender != "" {
			resp.RejectSenders = []string{req.Sender}
		}
		return resp, nil
	case err != nil:
		a.log.Warn("consensus: snapshot rejected", "chunk", req.Index, "err", err)
		a.restore = nil
		return &abci.ApplySnapshotChunkResponse{Result: abci.APPLY_SNAPSHOT_CHUNK_RESULT_REJECT_SNAPSHOT}, nil
	}
	a.synced.applied = int(req.Index) + 1
	if done {
		a.synced.done = true
		a.restore = nil
		a.retain.floor = a.l.Height()
	}
	return &abci.ApplySnapshotChunkResponse{Result: abci.APPLY_SNAPSHOT_CHUNK_RESULT_ACCEPT}, nil
}

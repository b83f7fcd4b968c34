package consensus

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
)

// FinalizeBlock executes a decided block's transactions, each atomically,
// and stages the new state; its root is the returned app hash.
func (a *App) FinalizeBlock(_ context.Context, req *abci.FinalizeBlockRequest) (*abci.FinalizeBlockResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if want := a.store.Height() + 1; req.Height != want {
		return nil, fmt.Errorf("consensus: finalize height %d, want %d", req.Height, want)
	}
	parent := a.store.Root()
	t, err := a.store.Open(parent)
	if err != nil {
		return nil, err
	}
	kv := &trieKV{t: t}
	blk := blockCtx{height: req.Height, time: req.Time.Unix(), genesisTime: a.meta.GenesisTime}
	results := make([]*abci.ExecTxResult, len(req.Txs))
	var changes []valChange
	for i, raw := range req.Txs {
		ch, res := a.deliver(kv, blk, raw)
		if kv.err != nil {
			return nil, kv.err
		}
		changes = append(changes, ch...)
		results[i] = res
	}
	meta := a.meta
	if _, err := load(kv, keyMeta, &meta); err != nil {
		return nil, err
	}
	meta.Height, meta.Time = req.Height, blk.time
	if err := store(kv, keyMeta, meta); err != nil {
		return nil, err
	}
	if kv.err != nil {
		return nil, kv.err
	}
	root, err := a.store.Stage(t, parent, req.Height)
	if err != nil {
		return nil, err
	}
	a.pendingRoot, a.pendingHeight, a.pending = root, req.Height, true
	return &abci.FinalizeBlockResponse{
		TxResults:        results,
		ValidatorUpdates: validatorUpdates(changes),
		AppHash:          root[:],
	}, nil
}

// deliver runs one transaction and turns its outcome into a result.
func (a *App) deliver(s kv, blk blockCtx, raw []byte) ([]valChange, *abci.ExecTxResult) {
	tx, err := DecodeTx(a.meta.ChainID, raw)
	if err != nil {
		return nil, result(err)
	}
	ch, err := execTx(s, blk, tx)
	if err != nil {
		return nil, result(err)
	}
	return ch, &abci.ExecTxResult{Code: 0, Events: []abci.Event{{
		Type: "tenzro.tx",
		Attributes: []abci.EventAttribute{
			{Key: "kind", Value: fmt.Sprint(tx.Body.Kind), Index: true},
			{Key: "signer", Value: tx.Body.Signer.String(), Index: true},
		},
	}}}
}

func result(err error) *abci.ExecTxResult {
	c := CodeOf(err)
	return &abci.ExecTxResult{Code: uint32(c), Codespace: "tenzro", Log: err.Error()}
}

// Commit writes the staged state to disk.
func (a *App) Commit(context.Context, *abci.CommitRequest) (*abci.CommitResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.pending {
		return nil, fmt.Errorf("consensus: commit without a finalized block")
	}
	if err := a.store.Commit(a.pendingRoot, a.pendingHeight); err != nil {
		return nil, err
	}
	a.pending = false
	a.meta.Height = a.pendingHeight
	a.resetCheck()
	return &abci.CommitResponse{}, nil
}

// CheckTx admits a transaction to the mempool when it would apply on top
// of the committed state and the transactions already admitted.
func (a *App) CheckTx(_ context.Context, req *abci.CheckTxRequest) (*abci.CheckTxResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.check == nil {
		return &abci.CheckTxResponse{Code: uint32(CodeInternal), Codespace: "tenzro", Log: "consensus: no state yet"}, nil
	}
	blk := blockCtx{height: a.store.Height() + 1, time: a.checkTime(), genesisTime: a.meta.GenesisTime}
	tx, err := DecodeTx(a.meta.ChainID, req.Tx)
	if err == nil {
		_, err = execTx(a.check, blk, tx)
	}
	if err != nil {
		return &abci.CheckTxResponse{Code: uint32(CodeOf(err)), Codespace: "tenzro", Log: err.Error()}, nil
	}
	return &abci.CheckTxResponse{Code: 0}, nil
}

// checkTime is the last block's time, the best guess of the next one's.
func (a *App) checkTime() int64 {
	var m ChainMeta
	if _, err := load(a.check, keyMeta, &m); err != nil {
		return a.meta.Time
	}
	return m.Time
}

// PrepareProposal keeps, in mempool order and within the byte budget, the
// transactions that apply on top of the committed state.
func (a *App) PrepareProposal(_ context.Context, req *abci.PrepareProposalRequest) (*abci.PrepareProposalResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, err := a.store.Open(a.store.Root())
	if err != nil {
		return nil, err
	}
	sim := newOverlay(&trieKV{t: t})
	blk := blockCtx{height: req.Height, time: req.Time.Unix(), genesisTime: a.meta.GenesisTime}
	var (
		out  [][]byte
		size int64
	)
	for _, raw := range req.Txs {
		if size+int64(len(raw)) > req.MaxTxBytes {
			break
		}
		tx, err := DecodeTx(a.meta.ChainID, raw)
		if err == nil {
			_, err = execTx(sim, blk, tx)
		}
		if err != nil {
			a.log.Debug("consensus: proposal drops tx", "err", err)
			continue
		}
		out = append(out, raw)
		size += int64(len(raw))
	}
	return &abci.PrepareProposalResponse{Txs: out}, nil
}

// ProcessProposal rejects a block carrying a transaction that does not
// decode or whose signature fails; stateful failures are left to
// FinalizeBlock, which records them as rejected transactions.
func (a *App) ProcessProposal(_ context.Context, req *abci.ProcessProposalRequest) (*abci.ProcessProposalResponse, error) {
	a.mu.Lock()
	chainID := a.meta.ChainID
	a.mu.Unlock()
	for _, raw := range req.Txs {
		if _, err := DecodeTx(chainID, raw); err != nil {
			a.log.Warn("consensus: rejecting proposal", "height", req.Height, "err", err)
			return &abci.ProcessProposalResponse{Status: abci.PROCESS_PROPOSAL_STATUS_REJECT}, nil
		}
	}
	return &abci.ProcessProposalResponse{Status: abci.PROCESS_PROPOSAL_STATUS_ACCEPT}, nil
}

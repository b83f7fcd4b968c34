package consensus

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// FinalizeBlock executes a decided block's transactions, each atomically,
// and stages the new state; its root is the returned app hash.
func (a *App) FinalizeBlock(_ context.Context, req *abci.FinalizeBlockRequest) (*abci.FinalizeBlockResponse, error) {
	// The block hash seeds the dispute committees drawn in this block.
	// A request without one (the app driven directly) gets the ledger's
	// stand-in.
	hash := ledger.StandInBlockHash(req.Height)
	switch len(req.Hash) {
	case 0:
	case len(hash):
		copy(hash[:], req.Hash)
	default:
		return nil, fmt.Errorf("consensus: block %d hash is %d bytes, want %d", req.Height, len(req.Hash), len(hash))
	}
	res, err := a.l.FinalizeHashed(req.Height, req.Time, hash, req.Txs)
	if err != nil {
		return nil, err
	}
	results := make([]*abci.ExecTxResult, len(res.Txs))
	for i, o := range res.Txs {
		if o.Code != ledger.CodeOK {
			results[i] = &abci.ExecTxResult{Code: uint32(o.Code), Codespace: "tenzro", Log: o.Log}
			continue
		}
		results[i] = &abci.ExecTxResult{Code: 0, Data: o.Data, Log: o.Log, Events: []abci.Event{{
			Type: "tenzro.tx",
			Attributes: []abci.EventAttribute{
				{Key: "kind", Value: fmt.Sprint(o.Kind), Index: true},
				{Key: "signer", Value: o.Signer.String(), Index: true},
			},
		}}}
	}
	return &abci.FinalizeBlockResponse{
		TxResults:        results,
		ValidatorUpdates: validatorUpdates(res.Changes),
		AppHash:          res.AppHash,
	}, nil
}

// Commit writes the staged state to disk and tells CometBFT which blocks
// it may prune (retention).
func (a *App) Commit(context.Context, *abci.CommitRequest) (*abci.CommitResponse, error) {
	if err := a.l.Commit(); err != nil {
		return nil, err
	}
	return &abci.CommitResponse{RetainHeight: a.retainHeight()}, nil
}

// CheckTx admits a transaction to the mempool when it would apply on top
// of the committed state and the transactions already admitted.
func (a *App) CheckTx(_ context.Context, req *abci.CheckTxRequest) (*abci.CheckTxResponse, error) {
	if err := a.l.Check(req.Tx); err != nil {
		return &abci.CheckTxResponse{Code: uint32(ledger.CodeOf(err)), Codespace: "tenzro", Log: err.Error()}, nil
	}
	return &abci.CheckTxResponse{Code: 0}, nil
}

// PrepareProposal keeps, in mempool order and within the byte budget, the
// transactions that apply on top of the committed state, and those that
// pay their fee and nonce and then fail (ledger.Prepare).
func (a *App) PrepareProposal(_ context.Context, req *abci.PrepareProposalRequest) (*abci.PrepareProposalResponse, error) {
	txs, err := a.l.Prepare(req.Height, req.Time, req.Txs, req.MaxTxBytes)
	if err != nil {
		return nil, err
	}
	return &abci.PrepareProposalResponse{Txs: txs}, nil
}

// ProcessProposal rejects a block carrying a transaction that does not
// decode or whose signature fails; stateful failures are left to
// FinalizeBlock, which records them as rejected transactions.
func (a *App) ProcessProposal(_ context.Context, req *abci.ProcessProposalRequest) (*abci.ProcessProposalResponse, error) {
	if err := a.l.Screen(req.Txs); err != nil {
		a.log.Warn("consensus: rejecting proposal", "height", req.Height, "err", err)
		return &abci.ProcessProposalResponse{Status: abci.PROCESS_PROPOSAL_STATUS_REJECT}, nil
	}
	return &abci.ProcessProposalResponse{Status: abci.PROCESS_PROPOSAL_STATUS_ACCEPT}, nil
}

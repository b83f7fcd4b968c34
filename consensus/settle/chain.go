package settle

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Chain is what settle reads of the chain.
type Chain interface {
	ChainID() string
	// Height is the latest committed height.
	Height(ctx context.Context) (int64, error)
	// Settled reports whether a record for (payer, request digest) is
	// settled on chain, by anyone, and if so its receipt.RecordDigest: a
	// holder counts it as its own only when the digests agree.
	Settled(ctx context.Context, payer terms.AccountID, digest terms.Hash32) (terms.Hash32, bool, error)
}

// Submitter is consensus.Submitter's method set: it signs a payload with
// one account's key, broadcasts it and waits for its commit.
type Submitter interface {
	Submit(ctx context.Context, payload any) (consensus.TxResult, error)
	Account() terms.AccountID
}

var _ Submitter = (*consensus.Submitter)(nil)

// ErrNoChain is returned by NodeChain before the node has committed a block.
var ErrNoChain = errors.New("settle: chain: no committed block yet")

// NodeChain reads the chain through an in-process consensus node.
func NodeChain(n *consensus.Node) Chain { return nodeChain{n: n} }

type nodeChain struct{ n *consensus.Node }

func (c nodeChain) ChainID() string { return c.n.App().ChainID() }

// Height reads the application's last commit: cheaper than an RPC round
// trip, and never ahead of what a query sees.
func (c nodeChain) Height(context.Context) (int64, error) {
	h := c.n.App().Height()
	if h <= 0 || c.n.App().ChainID() == "" {
		return 0, ErrNoChain
	}
	return h, nil
}

func (c nodeChain) Settled(ctx context.Context, payer terms.AccountID, digest terms.Hash32) (terms.Hash32, bool, error) {
	r, err := c.n.Query(ctx, "record/"+payer.String()+"/"+digest.String(), 0)
	if err != nil {
		return terms.Hash32{}, false, fmt.Errorf("settle: chain: record %s/%s: %w", payer, digest, err)
	}
	if len(r.Value) == 0 {
		return terms.Hash32{}, false, nil
	}
	var sr ledger.SettledRecord
	if err := cborx.UnmarshalCanonical(r.Value, ledger.MaxTxBytes, &sr); err != nil {
		return terms.Hash32{}, false, fmt.Errorf("settle: chain: record %s/%s: %w", payer, digest, err)
	}
	d, err := receipt.RecordDigest(c.ChainID(), &sr.Record)
	if err != nil {
		return terms.Hash32{}, false, fmt.Errorf("settle: chain: record %s/%s: %w", payer, digest, err)
	}
	return d, true, nil
}

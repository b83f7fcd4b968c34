package evidence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ErrNotCommitted is returned by Export for a range ending above the
// node's last committed height.
var ErrNotCommitted = errors.New("evidence: range ends above the last committed height")

// Export builds the pack of owner's payment records settled at heights
// fromHeight..toHeight: a payer account's records, or, for a provider
// machine, every record settled to it, of any payer. It proves them
// against the state after toHeight, whose root is the app hash of block
// toHeight+1, and adds that block's signed header, commit and validator
// set. When toHeight is the latest committed height, it waits (within ctx)
// for the next block. The pack is verified before it is returned, against
// its own validator set.
func Export[O consensus.RecordOwner](ctx context.Context, node *consensus.Node, owner O, fromHeight, toHeight int64) (*Pack, error) {
	return export(ctx, node, fromHeight, toHeight, func(p *Pack) error {
		r, err := consensus.FetchRecordRange(ctx, node, owner, fromHeight, toHeight, toHeight)
		if err != nil {
			return fmt.Errorf("evidence: records: %w", err)
		}
		switch o := any(owner).(type) {
		case terms.AccountID:
			p.Account = o
		case identity.MachineID:
			p.Machine = &o
		}
		p.Records, p.Proof = r.Records, r.Proof
		return nil
	})
}

// export fetches the signed header and validators after toHeight and has
// fill add the proven records.
func export(ctx context.Context, node *consensus.Node, fromHeight, toHeight int64, fill func(*Pack) error) (*Pack, error) {
	if fromHeight < 1 || toHeight < fromHeight {
		return nil, fmt.Errorf("evidence: export heights %d..%d: want 1 <= from <= to", fromHeight, toHeight)
	}
	c := node.Client()
	if c == nil {
		return nil, consensus.ErrNotStarted
	}
	if h := node.App().Height(); toHeight > h {
		return nil, fmt.Errorf("%w: %d > %d", ErrNotCommitted, toHeight, h)
	}
	next := toHeight + 1
	for node.App().Height() < next {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("evidence: wait for block %d: %w", next, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	commit, err := c.Commit(ctx, &next)
	if err != nil {
		return nil, fmt.Errorf("evidence: commit of block %d: %w", next, err)
	}
	vals, err := ExportValidatorSet(ctx, node, next)
	if err != nil {
		return nil, err
	}
	sh := commit.SignedHeader
	p := &Pack{
		Format: FormatPack, ChainID: sh.ChainID, FromHeight: fromHeight, ToHeight: toHeight,
		SignedHeader: &sh, Validators: vals.Set,
	}
	if err := fill(p); err != nil {
		return nil, err
	}
	if len(sh.AppHash) != len(p.AppHash) {
		return nil, fmt.Errorf("evidence: block %d app hash is %d bytes", next, len(sh.AppHash))
	}
	copy(p.AppHash[:], sh.AppHash)
	if _, err := Verify(p, vals); err != nil {
		return nil, fmt.Errorf("evidence: exported pack does not verify: %w", err)
	}
	return p, nil
}

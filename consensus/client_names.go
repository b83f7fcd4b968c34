package consensus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// NameRecord returns the catalog model ID a model name is bound to and the
// operator who bound it (zero when governance did); ok is false when the
// name is unbound. The answer carries a proof (Query "name/<name>").
func (n *Node) NameRecord(ctx context.Context, name string) (modelID ledger.Hash32, operator ledger.AccountID, ok bool, err error) {
	if err := ledger.CheckName(name); err != nil {
		return ledger.Hash32{}, ledger.AccountID{}, false, err
	}
	r, err := n.Query(ctx, "name/"+name, 0)
	if err != nil || len(r.Value) == 0 {
		return ledger.Hash32{}, ledger.AccountID{}, false, err
	}
	rec, err := ledger.DecodeNameRecord(r.Value)
	if err != nil {
		return ledger.Hash32{}, ledger.AccountID{}, false, fmt.Errorf("consensus: name %q: %w", name, err)
	}
	if rec.Name != name {
		return ledger.Hash32{}, ledger.AccountID{}, false, fmt.Errorf("consensus: name %q: record is for %q", name, rec.Name)
	}
	return rec.ModelID, rec.Operator, true, nil
}

// NameRecords lists the name bindings in name order (at most MaxListed).
func (n *Node) NameRecords(ctx context.Context) ([]ledger.NameRecord, error) {
	r, err := n.Query(ctx, "names", 0)
	if err != nil {
		return nil, err
	}
	var out []ledger.NameRecord
	if err := json.Unmarshal(r.Value, &out); err != nil {
		return nil, fmt.Errorf("consensus: names: %w", err)
	}
	return out, nil
}

package consensus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// NameRecord returns the catalog model ID a model name is bound to and the
// operator who bound it (zero when governance did); ok is false when the
// name is unbound. The answer carries a proof (Query "name/<name>").
func (n *Node) NameRecord(ctx context.Context, name string) (modelID terms.Hash32, operator terms.AccountID, ok bool, err error) {
	if err := ledger.CheckName(name); err != nil {
		return terms.Hash32{}, terms.AccountID{}, false, err
	}
	r, err := n.Query(ctx, "name/"+name, 0)
	if err != nil || len(r.Value) == 0 {
		return terms.Hash32{}, terms.AccountID{}, false, err
	}
	rec, err := ledger.DecodeNameRecord(r.Value)
	if err != nil {
		return terms.Hash32{}, terms.AccountID{}, false, fmt.Errorf("consensus: name %q: %w", name, err)
	}
	if rec.Name != name {
		return terms.Hash32{}, terms.AccountID{}, false, fmt.Errorf("consensus: name %q: record is for %q", name, rec.Name)
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

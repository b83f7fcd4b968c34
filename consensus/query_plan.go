package consensus

import (
	"bytes"
	"fmt"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// openPlans lists up to MaxListed of payer's undecided settlement plans:
// the entries of its plan index, then the plan each names, both read
// through r so both are proven.
func openPlans(t *trie.Trie, r *recorder, payer terms.AccountID) ([]ledger.Plan, error) {
	prefix := ledger.PlanIndexPrefix(payer)
	nit, err := t.NodeIteratorWithPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("consensus: iterate plans of %s: %w", payer, err)
	}
	it := trie.NewIterator(nit)
	var keys [][]byte
	for len(keys) < MaxListed && it.Next() {
		keys = append(keys, bytes.Clone(it.Key))
	}
	if it.Err != nil {
		return nil, fmt.Errorf("consensus: iterate plans of %s: %w", payer, it.Err)
	}
	out := make([]ledger.Plan, 0, len(keys))
	for _, k := range keys {
		id, ok := ledger.PlanIDOfIndexKey(k)
		if !ok {
			return nil, fmt.Errorf("consensus: plan index key %x of %d bytes", k, len(k))
		}
		if _, err := r.Get(k); err != nil {
			return nil, err
		}
		var p ledger.Plan
		ok, err := ledger.Load(r, ledger.KeyPlan(id), &p)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("consensus: plan index of %s names plan %s, which is not in state", payer, id)
		}
		out = append(out, p)
	}
	return out, nil
}

// activeDisputes reads the unresolved disputes (at most
// ledger.MaxActiveDisputes) through r, the list and each one proven.
func activeDisputes(r *recorder) ([]ledger.Dispute, error) {
	var act ledger.ActiveDisputes
	if _, err := ledger.Load(r, ledger.KeyActiveDisputes(), &act); err != nil {
		return nil, err
	}
	out := make([]ledger.Dispute, 0, len(act.IDs))
	for _, id := range act.IDs {
		var d ledger.Dispute
		ok, err := ledger.Load(r, ledger.KeyDispute(id), &d)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("consensus: active dispute %s is not in state", id)
		}
		out = append(out, d)
	}
	return out, nil
}

package consensus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Plan returns the settlement plan with this ID, open or decided.
func (n *Node) Plan(ctx context.Context, id terms.Hash32) (ledger.Plan, bool, error) {
	var p ledger.Plan
	ok, err := n.queryCBOR(ctx, "plan/"+id.String(), &p)
	return p, ok, err
}

// Plans returns payer's undecided settlement plans in ID order (at most
// MaxListed).
func (n *Node) Plans(ctx context.Context, payer terms.AccountID) ([]ledger.Plan, error) {
	r, err := n.Query(ctx, "plans/"+payer.String(), 0)
	if err != nil {
		return nil, err
	}
	var ps []ledger.Plan
	if err := json.Unmarshal(r.Value, &ps); err != nil {
		return nil, fmt.Errorf("consensus: plans of %s: %w", payer, err)
	}
	return ps, nil
}

// Record returns the settled payment record (payer, request digest):
// what it paid and the height it settled at, which opens its dispute
// window.
func (n *Node) Record(ctx context.Context, payer terms.AccountID, digest terms.Hash32) (ledger.SettledRecord, bool, error) {
	var r ledger.SettledRecord
	ok, err := n.queryCBOR(ctx, "record/"+payer.String()+"/"+digest.String(), &r)
	return r, ok, err
}

// Dispute returns a dispute: its subject, accused machine and operator,
// model, status and every committee round with its members' votes.
func (n *Node) Dispute(ctx context.Context, id terms.Hash32) (ledger.Dispute, bool, error) {
	var d ledger.Dispute
	ok, err := n.queryCBOR(ctx, "dispute/"+id.String(), &d)
	return d, ok, err
}

// DisputeEvidence returns what a dispute's committee re-executes: the
// receipt, the committed proofs, the generated token IDs and the input.
func (n *Node) DisputeEvidence(ctx context.Context, id terms.Hash32) (ledger.DisputeEvidence, bool, error) {
	var e ledger.DisputeEvidence
	ok, err := n.queryCBOR(ctx, "disputeevidence/"+id.String(), &e)
	return e, ok, err
}

// Disputes returns every dispute in ID order (at most MaxListed).
func (n *Node) Disputes(ctx context.Context) ([]ledger.Dispute, error) {
	r, err := n.Query(ctx, "disputes", 0)
	if err != nil {
		return nil, err
	}
	var ds []ledger.Dispute
	if err := json.Unmarshal(r.Value, &ds); err != nil {
		return nil, fmt.Errorf("consensus: disputes: %w", err)
	}
	return ds, nil
}

// ModelHolders returns the validators that declared a model's weights.
func (n *Node) ModelHolders(ctx context.Context, model terms.Hash32) (ledger.ModelHolders, error) {
	var h ledger.ModelHolders
	_, err := n.queryCBOR(ctx, "modelholders/"+model.String(), &h)
	return h, err
}

// Supply returns what left circulation (the burned total).
func (n *Node) Supply(ctx context.Context) (ledger.Supply, error) {
	var s ledger.Supply
	_, err := n.queryCBOR(ctx, "supply", &s)
	return s, err
}

// Duties lists what validator me must do next on its committees (commit
// or reveal, with the model and the deadline), for a transaction landing
// in the block after the last committed one. A member re-executes with
// DisputeEvidence of each duty's dispute before it commits.
func (n *Node) Duties(ctx context.Context, me terms.AccountID) ([]ledger.Duty, error) {
	r, err := n.Query(ctx, "activedisputes", 0)
	if err != nil {
		return nil, err
	}
	var ds []ledger.Dispute
	if err := json.Unmarshal(r.Value, &ds); err != nil {
		return nil, fmt.Errorf("consensus: active disputes: %w", err)
	}
	return ledger.MemberDuties(ds, me, r.Height+1), nil
}

package ledger

import (
	"crypto/sha256"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// openPlan moves the total out of the escrow's available balance into a
// plan, and commits it at once when every leg is on this chain: nothing
// outside this chain can then make it fail, so holding the money would
// only delay the payees. Like a stream, only the escrow's settler may
// spend it this way.
func (r *txRun) openPlan(p *PlanOpen) error {
	signer := r.tx.Body.Signer
	payer, settler := r.settlerOf(p.Payer), r.settlerOf(p.Settler)
	if signer != settler {
		return reject(CodeNotAuthorized, "plan from the escrow of (%s, %s) must be signed by its settler, not %s", payer, settler, signer)
	}
	chainID, err := r.chainID()
	if err != nil {
		return err
	}
	rule := SplitRuleHash(p.Legs)
	var quoteDigest terms.Hash32
	if len(p.Quote) > 0 {
		named, ok, err := QuoteSplitRule(p.Quote)
		if err != nil {
			return err
		}
		if ok && named != rule {
			return reject(CodeWrongSplitRule, "plan's split rule %s is not the rule %s its quote names", rule, named)
		}
		quoteDigest = sha256.Sum256(p.Quote)
	}
	ekey := KeyEscrow(payer, settler)
	var e Escrow
	found, err := Load(r.st, ekey, &e)
	if err != nil {
		return err
	}
	if !found {
		return reject(CodeUnknownEscrow, "%s has no escrow with settler %s", payer, settler)
	}
	if p.Total > e.Available() {
		return reject(CodeOverdraft, "plan total %d over the escrow's available %d", p.Total, e.Available())
	}
	id := PlanID(signer, r.tx.Body.Nonce)
	if seen, err := r.st.Get(KeyPlan(id)); err != nil {
		return err
	} else if seen != nil {
		return reject(CodeDuplicate, "plan %s already exists", id)
	}
	if e.Balance, err = sub(e.Balance, p.Total, "plan total"); err != nil {
		return err
	}
	if err := Save(r.st, ekey, e); err != nil {
		return err
	}
	pl := Plan{ID: id, Payer: payer, Settler: settler, Legs: p.Legs, Payouts: PlanPayouts(p.Total, p.Legs),
		Total: p.Total, SplitRule: rule, QuoteDigest: quoteDigest, OpenHeight: r.blk.Height,
		Deadline: after(r.blk.Height, p.TimeoutBlocks), Status: PlanOpenStatus}
	r.data = append([]byte(nil), id[:]...)
	if allLocal(p.Legs, chainID) {
		if err := r.commitPlan(&pl); err != nil {
			return err
		}
		r.log = fmt.Sprintf("plan %s opened and committed: %d micro-units to %d legs", id, p.Total, len(p.Legs))
		return Save(r.st, KeyPlan(id), pl)
	}
	r.st.Set(KeyPlanIndex(payer, id), []byte{1})
	r.log = fmt.Sprintf("plan %s opened: %d micro-units held for %d legs until height %d", id, p.Total, len(p.Legs), pl.Deadline)
	return Save(r.st, KeyPlan(id), pl)
}

// allLocal reports whether every leg is on this chain (no chain named, or
// this chain's ID).
func allLocal(legs []PlanLeg, chainID string) bool {
	for _, l := range legs {
		if l.Chain != "" && l.Chain != chainID {
			return false
		}
	}
	return true
}

// decidePlan records an open plan's one decision.
func (r *txRun) decidePlan(p *PlanDecide) error {
	var pl Plan
	ok, err := Load(r.st, KeyPlan(p.ID), &pl)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return reject(CodeUnknownPlan, "no plan %s", p.ID)
	case pl.Status != PlanOpenStatus:
		return reject(CodePlanDecided, "plan %s was %s at height %d", pl.ID, pl.Status, pl.DecideHeight)
	}
	signer := r.tx.Body.Signer
	lapsedAbort := !p.Commit && signer == pl.Payer && r.blk.Height > pl.Deadline
	if signer != pl.Settler && !lapsedAbort {
		return reject(CodeNotAuthorized, "plan %s is decided by its settler %s (its payer may abort after height %d), not %s",
			pl.ID, pl.Settler, pl.Deadline, signer)
	}
	r.st.Del(KeyPlanIndex(pl.Payer, pl.ID))
	if p.Commit {
		if err := r.commitPlan(&pl); err != nil {
			return err
		}
		r.log = fmt.Sprintf("plan %s committed: %d micro-units to %d legs", pl.ID, pl.Total, len(pl.Legs))
	} else {
		pl.Status, pl.DecideHeight = PlanAborted, r.blk.Height
		if err := r.refundEscrow(pl.Payer, pl.Settler, pl.Total); err != nil {
			return err
		}
		r.log = fmt.Sprintf("plan %s aborted: %d micro-units back to the escrow", pl.ID, pl.Total)
	}
	return Save(r.st, KeyPlan(pl.ID), pl)
}

// commitPlan pays every leg its payout and marks the plan committed.
func (r *txRun) commitPlan(pl *Plan) error {
	var sum uint64
	for i, l := range pl.Legs {
		var err error
		if sum, err = add(sum, pl.Payouts[i], "plan payouts"); err != nil {
			return err
		}
		if err := r.credit(l.Payee, pl.Payouts[i], "plan leg"); err != nil {
			return err
		}
	}
	if sum != pl.Total {
		return fmt.Errorf("ledger: plan %s payouts sum to %d, total is %d", pl.ID, sum, pl.Total)
	}
	pl.Status, pl.DecideHeight = PlanCommitted, r.blk.Height
	return nil
}

package ledger

import (
	"bytes"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

func (r *txRun) validator(op terms.AccountID) (Validator, bool, error) {
	var v Validator
	ok, err := Load(r.st, KeyValidator(op), &v)
	return v, ok, err
}

func (r *txRun) totals() (ValidatorTotals, error) {
	var t ValidatorTotals
	_, err := Load(r.st, keyTotals, &t)
	return t, err
}

// activeValidator returns the signer's validator record, or CodeNotValidator.
func (r *txRun) activeValidator() (Validator, error) {
	v, ok, err := r.validator(r.tx.Body.Signer)
	if err != nil {
		return v, err
	}
	if !ok || v.Power <= 0 {
		return v, reject(CodeNotValidator, "%s is not a validator with power", r.tx.Body.Signer)
	}
	return v, nil
}

// setStake writes v with a new stake, keeps the totals and queues the
// CometBFT power change.
func (r *txRun) setStake(v Validator, stake uint64) error {
	tot, err := r.totals()
	if err != nil {
		return err
	}
	old := v.Power
	v.Stake = stake
	v.Power = powerOf(stake)
	tot.Power += v.Power - old
	switch {
	case old == 0 && v.Power > 0:
		tot.Count++
	case old > 0 && v.Power == 0:
		tot.Count--
	}
	if tot.Count == 0 || tot.Power <= 0 {
		return reject(CodeLastValidator, "change would leave no validator power")
	}
	if err := Save(r.st, keyTotals, tot); err != nil {
		return err
	}
	if v.Stake == 0 {
		r.st.Del(KeyValidator(v.Operator))
		r.st.Del(keyConsKey(v.ConsPubKey))
	} else if err := Save(r.st, KeyValidator(v.Operator), v); err != nil {
		return err
	}
	if v.Power != old {
		r.changes = append(r.changes, ValChange{PubKey: v.ConsPubKey, Power: v.Power})
	}
	return nil
}

func (r *txRun) stake(p *ValidatorStake) error {
	op := r.tx.Body.Signer
	v, ok, err := r.validator(op)
	if err != nil {
		return err
	}
	if ok && !bytes.Equal(v.ConsPubKey, p.ConsPubKey) {
		return reject(CodeDuplicate, "validator %s already uses consensus key %x", op, v.ConsPubKey)
	}
	if !ok {
		owner, err := r.st.Get(keyConsKey(p.ConsPubKey))
		if err != nil {
			return err
		}
		if owner != nil {
			return reject(CodeDuplicate, "consensus key %x belongs to validator %x", p.ConsPubKey, owner)
		}
		v = Validator{Operator: op, ConsPubKey: p.ConsPubKey}
		r.st.Set(keyConsKey(p.ConsPubKey), op[:])
	}
	total, err := add(v.Stake, p.Amount, "stake")
	if err != nil {
		return err
	}
	if err := r.debit(op, p.Amount, "stake"); err != nil {
		return err
	}
	return r.setStake(v, total)
}

func (r *txRun) unstake(p *ValidatorUnstake) error {
	v, ok, err := r.validator(r.tx.Body.Signer)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeNotValidator, "%s has no validator stake", r.tx.Body.Signer)
	}
	rest, err := sub(v.Stake, p.Amount, "unstake")
	if err != nil {
		return err
	}
	if err := r.setStake(v, rest); err != nil {
		return err
	}
	return r.credit(r.tx.Body.Signer, p.Amount, "unstake")
}

func (r *txRun) meta() (ChainMeta, error) {
	var m ChainMeta
	ok, err := Load(r.st, keyMeta, &m)
	if err == nil && !ok {
		err = fmt.Errorf("ledger: state has no chain metadata")
	}
	return m, err
}

func (r *txRun) propose(p *ParamProposal) error { return r.openProposal(p.Params, nil) }

func (r *txRun) proposeName(p *NameProposal) error {
	cur, err := r.loadParams()
	if err != nil {
		return err
	}
	return r.openProposal(cur, p)
}

// openProposal opens a proposal (params, or a name rebind with params
// unchanged) with the proposer's yes vote.
func (r *txRun) openProposal(params Params, rebind *NameProposal) error {
	v, err := r.activeValidator()
	if err != nil {
		return err
	}
	cur, err := r.loadParams()
	if err != nil {
		return err
	}
	m, err := r.meta()
	if err != nil {
		return err
	}
	prop := Proposal{ID: m.NextProposalID, Proposer: v.Operator, Params: params, Rebind: rebind,
		Deadline: after(r.blk.Height, cur.VotingPeriodBlocks)}
	m.NextProposalID++
	if err := Save(r.st, keyMeta, m); err != nil {
		return err
	}
	return r.castVote(prop, v, true)
}

func (r *txRun) vote(p *ParamVote) error {
	v, err := r.activeValidator()
	if err != nil {
		return err
	}
	var prop Proposal
	ok, err := Load(r.st, KeyProposal(p.ProposalID), &prop)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownProposal, "no proposal %d", p.ProposalID)
	}
	if prop.Passed || r.blk.Height > prop.Deadline {
		return reject(CodeProposalClosed, "proposal %d passed or closed at height %d", prop.ID, prop.Deadline)
	}
	voted, err := r.st.Get(keyProposalVote(prop.ID, v.Operator))
	if err != nil {
		return err
	}
	if voted != nil {
		return reject(CodeAlreadyVoted, "%s already voted on proposal %d", v.Operator, prop.ID)
	}
	return r.castVote(prop, v, p.Approve)
}

// castVote records a vote and applies the proposal once yes votes hold
// > 2/3 of the current validator power.
func (r *txRun) castVote(prop Proposal, v Validator, approve bool) error {
	mark := []byte{0}
	if approve {
		mark[0] = 1
		prop.YesPower += v.Power
	}
	r.st.Set(keyProposalVote(prop.ID, v.Operator), mark)
	tot, err := r.totals()
	if err != nil {
		return err
	}
	if mulGT(prop.YesPower, 3, tot.Power, 2) {
		prop.Passed = true
		if prop.Rebind != nil {
			err = r.rebindName(prop.Rebind)
		} else {
			err = Save(r.st, keyParams, prop.Params)
		}
		if err != nil {
			return err
		}
	}
	return Save(r.st, KeyProposal(prop.ID), prop)
}

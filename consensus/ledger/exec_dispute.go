package ledger

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// declareModel adds the signing validator to a model's holders, or
// removes it.
func (r *txRun) declareModel(p *ModelDeclare) error {
	v, err := r.activeValidator()
	if err != nil {
		return err
	}
	var h ModelHolders
	if _, err := Load(r.st, KeyModelHolders(p.ModelID), &h); err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(h.Validators, v.Operator, func(a, b terms.AccountID) int { return bytes.Compare(a[:], b[:]) })
	switch {
	case p.Holds && !found:
		h.Validators = slices.Insert(h.Validators, i, v.Operator)
	case !p.Holds && found:
		h.Validators = slices.Delete(h.Validators, i, i+1)
	default:
		return nil
	}
	r.log = fmt.Sprintf("validator %s holds model %s: %v", v.Operator, p.ModelID, p.Holds)
	if len(h.Validators) == 0 {
		r.st.Del(KeyModelHolders(p.ModelID))
		return nil
	}
	return Save(r.st, KeyModelHolders(p.ModelID), h)
}

// eligible returns the validators with power that declared model, less
// the accused operator.
func (r *txRun) eligible(model terms.Hash32, accused terms.AccountID) ([]Candidate, error) {
	var h ModelHolders
	if _, err := Load(r.st, KeyModelHolders(model), &h); err != nil {
		return nil, err
	}
	var out []Candidate
	for _, op := range h.Validators {
		if op == accused {
			continue
		}
		v, ok, err := r.validator(op)
		if err != nil {
			return nil, err
		}
		if ok && v.Power > 0 {
			out = append(out, Candidate{Validator: op, Power: v.Power})
		}
	}
	return out, nil
}

// openDispute checks the subject and its evidence, takes the bond and
// queues the dispute for its committee draw in the next block (whose hash
// is the seed, unknown to anyone when the dispute is signed).
func (r *txRun) openDispute(p *DisputeOpen) error {
	if p.Bond < r.params.DisputeMinBond {
		return reject(CodeBondTooLow, "dispute bond %d below the minimum %d", p.Bond, r.params.DisputeMinBond)
	}
	var rec SettledRecord
	ok, err := Load(r.st, KeyRecord(p.Subject.Payer, p.Subject.RequestDigest), &rec)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeBadEvidence, "no settled record of payer %s for request %s", p.Subject.Payer, p.Subject.RequestDigest)
	}
	if least := DisputeBond(r.params, rec.Record.Price, p.Evidence.Chunk); p.Bond < least {
		return reject(CodeBondTooLow, "dispute bond %d below %d (the minimum, or %d bp of the record's price %d per chunk up to chunk %d)",
			p.Bond, least, r.params.DisputeBondBP, rec.Record.Price, p.Evidence.Chunk)
	}
	if end := after(rec.Height, r.params.DisputeWindowBlocks); r.blk.Height > end {
		return reject(CodeDisputeWindow, "record settled at height %d may be disputed up to height %d, block is %d", rec.Height, end, r.blk.Height)
	}
	var model terms.Hash32
	if p.Subject.Kind == SubjectExpertBatch {
		model, err = r.checkBatchEvidence(&rec, p.Subject.Batch, &p.Evidence)
	} else {
		model, err = checkEvidence(&rec, &p.Evidence)
	}
	if err != nil {
		return err
	}
	prov, err := r.provider(rec.Record.Provider)
	if err != nil {
		return err
	}
	id := DisputeID(p.Subject)
	if seen, err := r.st.Get(KeyDispute(id)); err != nil {
		return err
	} else if seen != nil {
		return reject(CodeDuplicate, "the subject (record %s of %s) is already disputed (%s)", p.Subject.RequestDigest, p.Subject.Payer, id)
	}
	var act ActiveDisputes
	if _, err := Load(r.st, keyActiveDisputes, &act); err != nil {
		return err
	}
	if len(act.IDs) >= MaxActiveDisputes {
		return reject(CodeTooManyDisputes, "%d disputes are open, limit %d", len(act.IDs), MaxActiveDisputes)
	}
	cands, err := r.eligible(model, prov.Operator)
	if err != nil {
		return err
	}
	if len(cands) == 0 {
		return reject(CodeNoCommittee, "no validator other than the accused operator %s declared model %s", prov.Operator, model)
	}
	if err := r.debit(r.tx.Body.Signer, p.Bond, "dispute bond"); err != nil {
		return err
	}
	prov.OpenDisputes++
	if err := Save(r.st, KeyProvider(prov.MachineID), prov); err != nil {
		return err
	}
	act.IDs = append(act.IDs, id)
	if err := Save(r.st, keyActiveDisputes, act); err != nil {
		return err
	}
	d := Dispute{ID: id, Subject: p.Subject, Disputer: r.tx.Body.Signer, Bond: p.Bond, Provider: prov.MachineID,
		Operator: prov.Operator, Model: model, Settler: rec.Record.Settler, Credited: rec.Record.Price - min(rec.Fee, rec.Record.Price),
		OpenHeight: r.blk.Height, Status: DisputeDrawing}
	if err := Save(r.st, KeyDisputeEvidence(id), p.Evidence); err != nil {
		return err
	}
	r.data = append([]byte(nil), id[:]...)
	r.log = fmt.Sprintf("dispute %s opened against machine %s with bond %d", id, prov.MachineID, p.Bond)
	return Save(r.st, KeyDispute(id), d)
}

// voteDispute records a member's commitment or reveal; a reveal that
// brings one verdict to 2/3 of the committee's power resolves the dispute.
func (r *txRun) voteDispute(p *DisputeVote) error {
	var d Dispute
	ok, err := Load(r.st, KeyDispute(p.ID), &d)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownDispute, "no dispute %s", p.ID)
	}
	cur := d.Current()
	if d.Status != DisputeVoting || cur == nil || cur.Round != p.Round {
		return reject(CodeWrongPhase, "dispute %s is %s (%d rounds), not voting in round %d", d.ID, d.Status, len(d.Rounds), p.Round)
	}
	signer := r.tx.Body.Signer
	mi := slices.IndexFunc(cur.Members, func(m CommitteeMember) bool { return m.Validator == signer })
	if mi < 0 {
		return reject(CodeNotMember, "%s is not on round %d of dispute %s", signer, cur.Round, d.ID)
	}
	m := &cur.Members[mi]
	h := r.blk.Height
	if p.Reveal == nil {
		switch {
		case h > cur.CommitEnd:
			return reject(CodeWrongPhase, "dispute %s round %d took commitments up to height %d, block is %d", d.ID, cur.Round, cur.CommitEnd, h)
		case m.Commitment != (terms.Hash32{}):
			return reject(CodeAlreadyVoted, "%s already committed on dispute %s round %d", signer, d.ID, cur.Round)
		}
		m.Commitment = p.Commitment
		r.log = fmt.Sprintf("dispute %s round %d: %s committed", d.ID, cur.Round, signer)
		return Save(r.st, KeyDispute(d.ID), d)
	}
	switch {
	case !cur.RevealsOpen(h):
		return reject(CodeWrongPhase, "dispute %s round %d takes reveals at heights %d..%d (earlier once every member committed), block is %d",
			d.ID, cur.Round, cur.CommitEnd+1, cur.RevealEnd, h)
	case m.Commitment == (terms.Hash32{}):
		return reject(CodeBadReveal, "%s committed nothing on dispute %s round %d", signer, d.ID, cur.Round)
	case m.Vote != VerdictNone:
		return reject(CodeAlreadyVoted, "%s already revealed on dispute %s round %d", signer, d.ID, cur.Round)
	case VoteCommitment(d.ID, cur.Round, signer, p.Reveal.Verdict, p.Reveal.Salt) != m.Commitment:
		return reject(CodeBadReveal, "reveal of %s does not open its commitment %s", signer, m.Commitment)
	}
	m.Vote = p.Reveal.Verdict
	r.log = fmt.Sprintf("dispute %s round %d: %s voted %s", d.ID, cur.Round, signer, m.Vote)
	if v := cur.verdict(); v != VerdictNone {
		return r.resolve(&d, v)
	}
	return Save(r.st, KeyDispute(d.ID), d)
}

// RevealsOpen reports whether the round takes reveals at height h: after
// its commit phase, or earlier once every member has committed (no vote
// can change then, so none can be copied), up to RevealEnd.
func (rd *DisputeRound) RevealsOpen(h int64) bool {
	if h > rd.RevealEnd {
		return false
	}
	if h > rd.CommitEnd {
		return true
	}
	for _, m := range rd.Members {
		if m.Commitment == (terms.Hash32{}) {
			return false
		}
	}
	return true
}

// verdict is guilty or innocent once revealed votes for it hold at least
// 2/3 of the round's power, VerdictNone otherwise.
func (rd *DisputeRound) verdict() Verdict {
	var total, guilty, innocent int64
	for _, m := range rd.Members {
		total += m.Power
		switch m.Vote {
		case VerdictGuilty:
			guilty += m.Power
		case VerdictInnocent:
			innocent += m.Power
		}
	}
	switch {
	case total == 0:
		return VerdictNone
	case !mulGT(2*total, 1, 3*guilty, 1): // 3 × guilty ≥ 2 × total
		return VerdictGuilty
	case !mulGT(2*total, 1, 3*innocent, 1):
		return VerdictInnocent
	}
	return VerdictNone
}

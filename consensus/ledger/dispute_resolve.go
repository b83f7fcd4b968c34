package ledger

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// disputeTick runs before a block's transactions: it draws the committee
// of every dispute opened in an earlier block (seeded by this block's
// hash), and ends every round whose verdict limit passed without a
// verdict (a second draw of up to 2k+1 after round 1, a lapse after round
// 2). Each dispute is handled in an overlay of its own: a rejection there
// (a broken invariant of one dispute) is logged and leaves it as it was,
// while a store failure fails the block.
func (l *Ledger) disputeTick(kv KV, blk Block) error {
	var act ActiveDisputes
	if _, err := Load(kv, keyActiveDisputes, &act); err != nil || len(act.IDs) == 0 {
		return err
	}
	var p Params
	if _, err := Load(kv, keyParams, &p); err != nil {
		return err
	}
	for _, id := range act.IDs {
		st := NewOverlay(kv)
		r := &txRun{st: st, blk: blk, params: p}
		err := r.tickDispute(id)
		var te *TxError
		switch {
		case err == nil:
			st.Flush()
		case errors.As(err, &te):
			l.log.Error("ledger: dispute tick", "dispute", id, "height", blk.Height, "err", err)
		default:
			return err
		}
	}
	return nil
}

func (r *txRun) tickDispute(id terms.Hash32) error {
	var d Dispute
	ok, err := Load(r.st, KeyDispute(id), &d)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownDispute, "active dispute %s is not in state", id)
	}
	h := r.blk.Height
	switch cur := d.Current(); {
	case d.Status == DisputeDrawing && d.OpenHeight < h:
		return r.draw(&d, 1, int(min(r.params.DisputeCommittee, MaxCommittee)))
	case d.Status == DisputeVoting && h > cur.RevealEnd && cur.Round == 1:
		return r.draw(&d, 2, 2*int(min(r.params.DisputeCommittee, MaxCommittee))+1)
	case d.Status == DisputeVoting && h > cur.RevealEnd:
		return r.resolve(&d, VerdictNone)
	}
	return nil
}

// draw seats round's committee of up to k from the validators eligible
// now, seeded by this block's hash; with none eligible the dispute lapses.
func (r *txRun) draw(d *Dispute, round uint8, k int) error {
	cands, err := r.eligible(d.Model, d.Operator)
	if err != nil {
		return err
	}
	seed := r.blk.Hash
	picked := DrawCommittee(seed, round, cands, k)
	if len(picked) == 0 {
		return r.resolve(d, VerdictNone)
	}
	rd := DisputeRound{Round: round, Seed: seed, DrawHeight: r.blk.Height}
	rd.CommitEnd = after(r.blk.Height, r.params.DisputeVerdictBlocks/2) - 1
	rd.RevealEnd = after(r.blk.Height, r.params.DisputeVerdictBlocks) - 1
	for _, c := range picked {
		rd.Members = append(rd.Members, CommitteeMember{Validator: c.Validator, Power: c.Power})
	}
	d.Rounds = append(d.Rounds, rd)
	d.Status = DisputeVoting
	return Save(r.st, KeyDispute(d.ID), d)
}

// resolve ends a dispute: guilty slashes the provider's bond (a share to
// the disputer, the rest burned and accounted in Supply), returns the
// disputer's bond, refunds the record's whole price to the buyer's escrow
// (see reverse: the operator's credit, the rest out of the burn) and
// zeroes the provider's standing for the governed hours; innocent pays the disputer's bond to the provider's
// operator; no verdict returns the bond. Votes against the verdict are
// marked.
func (r *txRun) resolve(d *Dispute, v Verdict) error {
	prov, err := r.provider(d.Provider)
	gone := CodeOf(err) == CodeUnknownProvider
	switch {
	case gone:
		// A disputed bond cannot be withdrawn, so this is a broken
		// invariant; the disputer gets its bond back rather than the
		// chain halting on it.
		v = VerdictNone
	case err != nil:
		return err
	case prov.OpenDisputes > 0:
		prov.OpenDisputes--
	}
	switch v {
	case VerdictGuilty:
		d.Status = DisputeGuilty
		if err := r.convict(d, &prov); err != nil {
			return err
		}
	case VerdictInnocent:
		d.Status = DisputeInnocent
		if err := r.credit(d.Operator, d.Bond, "forfeited dispute bond"); err != nil {
			return err
		}
	default:
		d.Status = DisputeLapsed
		if err := r.credit(d.Disputer, d.Bond, "dispute bond return"); err != nil {
			return err
		}
	}
	if cur := d.Current(); cur != nil && v != VerdictNone {
		for i := range cur.Members {
			m := &cur.Members[i]
			m.Against = (m.Vote == VerdictGuilty || m.Vote == VerdictInnocent) && m.Vote != v
		}
	}
	d.ResolveHeight = r.blk.Height
	if !gone {
		if err := Save(r.st, KeyProvider(prov.MachineID), prov); err != nil {
			return err
		}
	}
	var act ActiveDisputes
	if _, err := Load(r.st, keyActiveDisputes, &act); err != nil {
		return err
	}
	act.IDs = slices.DeleteFunc(act.IDs, func(id terms.Hash32) bool { return id == d.ID })
	if len(act.IDs) == 0 {
		r.st.Del(keyActiveDisputes)
	} else if err := Save(r.st, keyActiveDisputes, act); err != nil {
		return err
	}
	r.log = fmt.Sprintf("dispute %s resolved %s", d.ID, d.Status)
	return Save(r.st, KeyDispute(d.ID), d)
}

// convict slashes (once per episode, episode.go) and pays for a guilty
// verdict.
func (r *txRun) convict(d *Dispute, prov *Provider) error {
	settled, err := r.settledHeight(d)
	if err != nil {
		return err
	}
	slash := r.episodeSlash(prov, settled, d.Credited)
	reward := mulDiv(slash, r.params.DisputeRewardBP, BasisPoints)
	burn := slash - reward
	if prov.Bond, err = sub(prov.Bond, slash, "slash"); err != nil {
		return err
	}
	if prov.Slashed, err = add(prov.Slashed, slash, "slashed total"); err != nil {
		return err
	}
	back, err := add(d.Bond, reward, "disputer payout")
	if err != nil {
		return err
	}
	if err := r.credit(d.Disputer, back, "dispute reward"); err != nil {
		return err
	}
	var sup Supply
	if _, err := Load(r.st, keySupply, &sup); err != nil {
		return err
	}
	if sup.Burned, err = add(sup.Burned, burn, "burned"); err != nil {
		return err
	}
	if err := Save(r.st, keySupply, sup); err != nil {
		return err
	}
	d.Slashed, d.Reward, d.Burned = slash, reward, burn
	// The whole price goes back to the buyer (reverse says who pays it).
	if err := r.reverse(d); err != nil {
		return err
	}
	until := after(r.blk.Time, r.params.DisputeStandingHours*r.params.HourSeconds)
	prov.SlashedUntil = max(prov.SlashedUntil, until)
	return nil
}

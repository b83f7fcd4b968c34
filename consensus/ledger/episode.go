package ledger

import "fmt"

// One conviction per episode. A machine that lies does so for a while
// before the first of its sampled answers is judged; every answer it was
// paid for in that while is one episode. The first guilty verdict slashes
// the governed share of the bond once, bars the machine (no record paying
// it settles, CodeConvicted; gateways and serving providers drop it from
// rotation through the chain view) and sets what re-bonding costs: the
// amount slashed. Every later guilty verdict over a record settled at or
// before that conviction's height is judged and reverses its record as
// usual, but slashes nothing: the episode is punished already. The
// window is counted in settled records, not blocks or epochs, because a
// barred machine earns nothing: every record it could be convicted over
// again settled before the conviction, and a record settled after it can
// only follow a re-bond, which starts the next episode.

// episodeSlash is what the guilty verdict d takes from prov's bond: the
// governed share when d's record is past prov's last slashing conviction
// (a new episode, which bars the machine until it re-bonds), nothing when
// the record belongs to the episode that conviction punished. settled is
// the height d's record settled at (its open height when the record is
// gone, an upper bound).
func (r *txRun) episodeSlash(prov *Provider, settled int64, credited uint64) uint64 {
	if prov.ConvictedAt != 0 && settled <= prov.ConvictedAt {
		return 0
	}
	slash := DisputeSlash(r.params, prov.Bond, credited)
	prov.ConvictedAt, prov.Barred, prov.RebondDue = r.blk.Height, true, slash
	return slash
}

// settledHeight is the height the subject record of d settled at, or d's
// open height when it is no longer in state.
func (r *txRun) settledHeight(d *Dispute) (int64, error) {
	var rec SettledRecord
	found, err := Load(r.st, KeyRecord(d.Subject.Payer, d.Subject.RequestDigest), &rec)
	if err != nil || !found {
		return d.OpenHeight, err
	}
	return rec.Height, nil
}

// rebond adds to the bond of a machine the signer operates and, once it
// has put back what its conviction slashed and the bond is live again,
// lifts the bar.
func (r *txRun) rebond(p *ProviderRebond) error {
	prov, err := r.operatedProvider(p.MachineID)
	if err != nil {
		return err
	}
	if prov.UnbondAt != 0 {
		return reject(CodeUnbonding, "machine %s is unbonding: register it again instead", prov.MachineID)
	}
	bond, err := add(prov.Bond, p.Amount, "bond")
	if err != nil {
		return err
	}
	if prov.Barred {
		switch {
		case p.Amount < prov.RebondDue:
			return reject(CodeBondTooLow, "machine %s was convicted at height %d: a re-bond must put back the %d slashed, not %d",
				prov.MachineID, prov.ConvictedAt, prov.RebondDue, p.Amount)
		case bond < r.params.MinServingBond:
			return reject(CodeBondTooLow, "machine %s: bond %d after the re-bond is below the serving minimum %d", prov.MachineID, bond, r.params.MinServingBond)
		}
	}
	if err := r.debit(r.tx.Body.Signer, p.Amount, "re-bond"); err != nil {
		return err
	}
	prov.Bond = bond
	if prov.Barred {
		r.log = fmt.Sprintf("machine %s re-bonded to %d after its conviction at height %d: readmitted", prov.MachineID, bond, prov.ConvictedAt)
	}
	prov.Barred, prov.RebondDue = false, 0
	return Save(r.st, KeyProvider(prov.MachineID), prov)
}

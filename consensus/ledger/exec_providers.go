package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func (r *txRun) provider(m identity.MachineID) (Provider, error) {
	var p Provider
	ok, err := Load(r.st, KeyProvider(m), &p)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, reject(CodeUnknownProvider, "machine %s is not registered", m)
	}
	return p, nil
}

// operatedProvider returns a provider the signer operates.
func (r *txRun) operatedProvider(m identity.MachineID) (Provider, error) {
	p, err := r.provider(m)
	if err != nil {
		return p, err
	}
	if p.Operator != r.tx.Body.Signer {
		return p, reject(CodeNotAuthorized, "machine %s is operated by %s, not %s", m, p.Operator, r.tx.Body.Signer)
	}
	return p, nil
}

func (r *txRun) register(p *ProviderRegister) error {
	prev, err := r.st.Get(KeyProvider(p.MachineID))
	if err != nil {
		return err
	}
	if prev != nil {
		return reject(CodeDuplicate, "machine %s is already registered", p.MachineID)
	}
	owner, err := r.st.Get(KeyPeer(p.PeerID))
	if err != nil {
		return err
	}
	if owner != nil {
		return reject(CodeDuplicate, "peer ID %s is already registered to machine %x", p.PeerID, owner)
	}
	params, err := r.params()
	if err != nil {
		return err
	}
	if p.Bond < params.MinServingBond {
		return reject(CodeBondTooLow, "serving bond %d below minimum %d", p.Bond, params.MinServingBond)
	}
	if err := r.debit(r.tx.Body.Signer, p.Bond, "serving bond"); err != nil {
		return err
	}
	r.st.Set(KeyPeer(p.PeerID), p.MachineID[:])
	return Save(r.st, KeyProvider(p.MachineID), Provider{
		MachineID: p.MachineID, Operator: r.tx.Body.Signer, HWPubDER: p.HWPubDER, PQPub: p.PQPub,
		PeerID: p.PeerID, Bond: p.Bond, UnbondingSecs: p.UnbondingSecs, RegisteredHeight: r.blk.Height,
	})
}

func (r *txRun) unbond(u *ProviderUnbond) error {
	p, err := r.operatedProvider(u.MachineID)
	if err != nil {
		return err
	}
	if p.UnbondAt != 0 {
		return reject(CodeUnbonding, "machine %s is already unbonding", p.MachineID)
	}
	p.UnbondAt = r.blk.Time + int64(p.UnbondingSecs)
	return Save(r.st, KeyProvider(p.MachineID), p)
}

func (r *txRun) withdrawBond(w *ProviderWithdraw) error {
	p, err := r.operatedProvider(w.MachineID)
	if err != nil {
		return err
	}
	if p.UnbondAt == 0 || r.blk.Time < p.UnbondAt {
		return reject(CodeUnbonding, "bond of machine %s is locked until %d (now %d, 0 = not unbonding)",
			p.MachineID, p.UnbondAt, r.blk.Time)
	}
	r.st.Del(KeyProvider(p.MachineID))
	r.st.Del(KeyPeer(p.PeerID))
	return r.credit(p.Operator, p.Bond, "bond return")
}

// hourOf is the SLA hour index of a unix time: whole hours since genesis.
func HourOf(t, genesis int64, hourSeconds uint64) uint64 {
	if t <= genesis || hourSeconds == 0 {
		return 0
	}
	return uint64(t-genesis) / hourSeconds
}

func (r *txRun) verdict(v *SLAVerdict) error {
	val, err := r.activeValidator()
	if err != nil {
		return err
	}
	if _, err := r.provider(v.MachineID); err != nil {
		return err
	}
	params, err := r.params()
	if err != nil {
		return err
	}
	cur := HourOf(r.blk.Time, r.blk.GenesisTime, params.HourSeconds)
	if v.Hour > cur || v.Hour+params.SLAWindowHours < cur {
		return reject(CodeBadHour, "hour %d outside [%d, %d]", v.Hour, max(cur, params.SLAWindowHours)-params.SLAWindowHours, cur)
	}
	vk := keyVerdict(v.MachineID, v.Hour, val.Operator)
	seen, err := r.st.Get(vk)
	if err != nil {
		return err
	}
	if seen != nil {
		return reject(CodeAlreadyVoted, "%s already gave a verdict on %s for hour %d", val.Operator, v.MachineID, v.Hour)
	}
	tot, err := r.totals()
	if err != nil {
		return err
	}
	var t HourTally
	if _, err := Load(r.st, KeyHourTally(v.MachineID, v.Hour), &t); err != nil {
		return err
	}
	mark := []byte{0}
	if v.Available {
		mark[0] = 1
		t.AvailablePower += val.Power
	} else {
		t.UnavailablePower += val.Power
	}
	t.TotalPower = tot.Power
	r.st.Set(vk, mark)
	return Save(r.st, KeyHourTally(v.MachineID, v.Hour), t)
}

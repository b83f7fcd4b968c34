package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/identity"
)

func (r *txRun) provider(m identity.MachineID) (Provider, error) { return r.providerIn(r.st, m) }

func (r *txRun) providerIn(st KV, m identity.MachineID) (Provider, error) {
	var p Provider
	ok, err := Load(st, KeyProvider(m), &p)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, reject(CodeUnknownProvider, "machine %s is not registered", m)
	}
	return p, nil
}

// checkPairing refuses a registration whose machine or peer ID is already
// registered: to another operator (taken), in another pairing by the same
// operator (pairing changed), or exactly as given (duplicate).
func (r *txRun) checkPairing(p *ProviderRegister) error {
	op := r.tx.Body.Signer
	var prev Provider
	had, err := Load(r.st, KeyProvider(p.MachineID), &prev)
	if err != nil {
		return err
	}
	switch {
	case had && prev.Operator != op:
		return reject(CodeMachineTaken, "machine %s is registered by operator %s", p.MachineID, prev.Operator)
	case had && prev.PeerID != p.PeerID:
		return reject(CodePairingChanged, "machine %s is registered with peer %s, not %s", p.MachineID, prev.PeerID, p.PeerID)
	case had:
		return reject(CodeDuplicate, "machine %s is already registered with peer %s", p.MachineID, p.PeerID)
	}
	owner, err := r.st.Get(KeyPeer(p.PeerID))
	if err != nil {
		return err
	}
	if owner == nil {
		return nil
	}
	var m identity.MachineID
	copy(m[:], owner)
	var holder Provider
	if _, err := Load(r.st, KeyProvider(m), &holder); err != nil {
		return err
	}
	if holder.Operator != op {
		return reject(CodePeerTaken, "peer ID %s is registered to machine %s of operator %s", p.PeerID, m, holder.Operator)
	}
	return reject(CodePairingChanged, "peer ID %s is registered to machine %s, not %s", p.PeerID, m, p.MachineID)
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
	if err := r.checkPairing(p); err != nil {
		return err
	}
	params, err := r.loadParams()
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
	p.UnbondAt = after(r.blk.Time, p.UnbondingSecs)
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
	if p.OpenDisputes > 0 {
		return reject(CodeUnbonding, "bond of machine %s is disputed (%d open disputes)", p.MachineID, p.OpenDisputes)
	}
	if free := DisputeFreeHeight(p, r.params); r.blk.Height < free {
		return reject(CodeUnbonding, "bond of machine %s may still be disputed until height %d (last record settled at %d), block is %d",
			p.MachineID, free, p.LastSettled, r.blk.Height)
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
	return nonNeg(t-genesis) / hourSeconds
}

func (r *txRun) verdict(v *SLAVerdict) error {
	val, err := r.activeValidator()
	if err != nil {
		return err
	}
	if _, err := r.provider(v.MachineID); err != nil {
		return err
	}
	params, err := r.loadParams()
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

// DisputeFreeHeight is the first height at which no dispute over p's
// settled records can still be opened or running: the dispute window
// after its last settled record plus two rounds (each a draw block and a
// verdict limit). A machine that never settled a record is free at once.
func DisputeFreeHeight(p Provider, params Params) int64 {
	if p.LastSettled == 0 {
		return 0
	}
	return after(after(p.LastSettled, params.DisputeWindowBlocks), 2*(params.DisputeVerdictBlocks+1)+1)
}

package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// HourVerdicts is one hour of a standing window.
type HourVerdicts struct {
	Hour      uint64    `json:"hour"`
	Available bool      `json:"available"`
	Tally     HourTally `json:"tally"`
}

// Standing is a provider's standing with every input that produced it:
//
//	standing = 0                                       if the bond is not live,
//	                                                   a conviction's penalty lasts, or
//	                                                   the machine is barred (not re-bonded)
//	standing = BondedBP + AvailBP × AvailableHours / WindowHours   otherwise
//
// in basis points (10000 = 1.0), rounded down. The window is the
// WindowHours completed hours before CurrentHour; an hour counts as
// available when verdicts of > 2/3 of validator power found the provider
// available in it (hours without such verdicts count as unavailable).
type Standing struct {
	MachineID      identity.MachineID `json:"machine_id"`
	Height         int64              `json:"height"`
	StandingBP     uint64             `json:"standing_bp"`
	BondLive       bool               `json:"bond_live"`
	Bond           uint64             `json:"bond"`
	MinServingBond uint64             `json:"min_serving_bond"`
	UnbondAt       int64              `json:"unbond_at"`
	BondedBP       uint64             `json:"bonded_bp"`
	AvailBP        uint64             `json:"avail_bp"`
	CurrentHour    uint64             `json:"current_hour"`
	WindowHours    uint64             `json:"window_hours"`
	AvailableHours uint64             `json:"available_hours"`
	Hours          []HourVerdicts     `json:"hours"` // oldest first; hours before genesis are omitted
	// SlashedUntil is when a conviction's zero standing ends (unix
	// seconds; 0 = never convicted); standing is 0 before it.
	SlashedUntil int64 `json:"slashed_until,omitempty"`
	// Barred is set from a conviction until the machine re-bonds
	// (ProviderRebond): standing is 0, no record paying it settles, and
	// routers leave it out; ConvictedAt is that conviction's height.
	Barred      bool   `json:"barred,omitempty"`
	ConvictedAt int64  `json:"convicted_at,omitempty"`
	RebondDue   uint64 `json:"rebond_due,omitempty"` // what a re-bond must add to lift the bar
}

// ComputeStanding derives a provider's standing from the state committed
// at the block at.
func ComputeStanding(s KV, m identity.MachineID, at Stamp) (Standing, error) {
	var (
		prov   Provider
		params Params
		meta   ChainMeta
	)
	ok, err := Load(s, KeyProvider(m), &prov)
	if err != nil {
		return Standing{}, err
	}
	if !ok {
		return Standing{}, reject(CodeUnknownProvider, "machine %s is not registered", m)
	}
	if _, err := Load(s, keyParams, &params); err != nil {
		return Standing{}, err
	}
	if _, err := Load(s, keyMeta, &meta); err != nil {
		return Standing{}, err
	}
	st := Standing{
		MachineID: m, Height: at.Height, Bond: prov.Bond, MinServingBond: params.MinServingBond,
		UnbondAt: prov.UnbondAt, BondedBP: params.StandingBondedBP, AvailBP: params.StandingAvailBP,
		CurrentHour: HourOf(at.Time, meta.GenesisTime, params.HourSeconds), WindowHours: params.SLAWindowHours,
	}
	st.BondLive = prov.UnbondAt == 0 && prov.Bond >= params.MinServingBond
	first := uint64(0)
	if st.CurrentHour > st.WindowHours {
		first = st.CurrentHour - st.WindowHours
	}
	for h := first; h < st.CurrentHour; h++ {
		var t HourTally
		if _, err := Load(s, KeyHourTally(m, h), &t); err != nil {
			return Standing{}, err
		}
		hv := HourVerdicts{Hour: h, Available: t.Available(), Tally: t}
		if hv.Available {
			st.AvailableHours++
		}
		st.Hours = append(st.Hours, hv)
	}
	st.SlashedUntil, st.Barred, st.ConvictedAt, st.RebondDue = prov.SlashedUntil, prov.Barred, prov.ConvictedAt, prov.RebondDue
	if st.BondLive && !st.Barred && st.WindowHours > 0 && at.Time >= prov.SlashedUntil {
		st.StandingBP = st.BondedBP + mulDiv(st.AvailBP, st.AvailableHours, st.WindowHours)
	}
	return st, nil
}

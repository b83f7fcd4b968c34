package ledger

// MinWithdrawDelayBlocks is the least governed WithdrawDelayBlocks.
const MinWithdrawDelayBlocks = 2

// BasisPoints is the scale of standing and its weights: 10000 = 100%.
const BasisPoints = 10000

// PowerUnit is the stake, in micro-units, per unit of CometBFT voting power.
const PowerUnit = 1_000_000

// Params are the governed parameters. All amounts are micro-units.
type Params struct {
	// Surcharge* are the verification surcharges: flat micro-units per
	// call added to the rate card's price of the level asked. Every
	// gateway on the chain quotes and bills these (router/pricing).
	SurchargeNone       uint64 `cbor:"1,keyasint" json:"surcharge_none"`
	SurchargeReceipt    uint64 `cbor:"2,keyasint" json:"surcharge_receipt"`
	SurchargeOptimistic uint64 `cbor:"3,keyasint" json:"surcharge_optimistic"`
	SurchargeTEE        uint64 `cbor:"4,keyasint" json:"surcharge_tee"`
	MinServingBond      uint64 `cbor:"5,keyasint" json:"min_serving_bond"`
	SLAWindowHours      uint64 `cbor:"6,keyasint" json:"sla_window_hours"`
	StandingBondedBP    uint64 `cbor:"7,keyasint" json:"standing_bonded_bp"`
	StandingAvailBP     uint64 `cbor:"8,keyasint" json:"standing_avail_bp"`
	HourSeconds         uint64 `cbor:"9,keyasint" json:"hour_seconds"`
	VotingPeriodBlocks  uint64 `cbor:"10,keyasint" json:"voting_period_blocks"`
	// FeePerTx is paid by every transaction's signer to FeePoolAccount,
	// also when the transaction fails inside a block.
	FeePerTx uint64 `cbor:"11,keyasint" json:"fee_per_tx"`
	// FeePerRecord is taken from the provider's credit of each settled
	// record (at most the record's price) and paid to FeePoolAccount; a
	// record refused after signature work costs the settlement's signer
	// the same, held up front for every record (settle_fee.go).
	FeePerRecord uint64 `cbor:"12,keyasint" json:"fee_per_record"`
	// WithdrawDelayBlocks is how long an escrow withdrawal waits before it
	// pays out. It must exceed a payment record's validity (its expiry
	// height minus the height it was signed at) plus the gateway's grace
	// period before it submits unsettled records, so every record signed
	// against funds still available can settle before those funds leave.
	WithdrawDelayBlocks uint64 `cbor:"13,keyasint" json:"withdraw_delay_blocks"`
	// DisputeMinBond is the least bond a dispute is opened with, whatever
	// the disputed job's price (DisputeBond).
	DisputeMinBond uint64 `cbor:"14,keyasint" json:"dispute_min_bond"`
	// DisputeWindowBlocks is how long after a record settled it may be
	// disputed. A provider's bond cannot be withdrawn until this window
	// plus two verdict limits (and their draws) after its last settled
	// record, so every dispute it can face ends while the bond is there.
	DisputeWindowBlocks uint64 `cbor:"15,keyasint" json:"dispute_window_blocks"`
	// DisputeCommittee is k, a dispute committee's size (capped at the
	// validators eligible); a redraw takes up to 2k+1.
	DisputeCommittee uint64 `cbor:"16,keyasint" json:"dispute_committee"`
	// DisputeVerdictBlocks is a round's verdict limit: commits in its
	// first half, reveals in the rest.
	DisputeVerdictBlocks uint64 `cbor:"17,keyasint" json:"dispute_verdict_blocks"`
	// DisputeSlashBP is the share of a convicted provider's serving bond
	// slashed; DisputeRewardBP the share of the slashed amount paid to the
	// disputer (the rest is burned).
	DisputeSlashBP  uint64 `cbor:"18,keyasint" json:"dispute_slash_bp"`
	DisputeRewardBP uint64 `cbor:"19,keyasint" json:"dispute_reward_bp"`
	// DisputeStandingHours is how many governed hours a convicted
	// provider's standing stays 0.
	DisputeStandingHours uint64 `cbor:"20,keyasint" json:"dispute_standing_hours"`
	// DisputeBondBP is the disputer's bond as a share of the disputed
	// record's price per chunk up to the one named, above
	// DisputeMinBond; DisputeSlashPriceX caps a
	// conviction's slash at that many times what the provider was paid
	// for the record (0: the bond share alone). See DisputeBond and
	// DisputeSlash for why.
	DisputeBondBP      uint64 `cbor:"21,keyasint,omitempty" json:"dispute_bond_bp"`
	DisputeSlashPriceX uint64 `cbor:"22,keyasint,omitempty" json:"dispute_slash_price_x"`
}

// DefaultParams are the parameters of a new production network.
func DefaultParams() Params {
	return Params{
		SurchargeNone:       0,
		SurchargeReceipt:    10,
		SurchargeOptimistic: 100,
		SurchargeTEE:        500,
		MinServingBond:      1_000_000_000,
		SLAWindowHours:      24,
		StandingBondedBP:    3000,
		StandingAvailBP:     7000,
		HourSeconds:         3600,
		VotingPeriodBlocks:  10_000,
		FeePerTx:            0,
		FeePerRecord:        0,
		WithdrawDelayBlocks: 600,

		DisputeMinBond:       100,
		DisputeWindowBlocks:  1200,
		DisputeCommittee:     5,
		DisputeVerdictBlocks: 40,
		DisputeSlashBP:       1000,
		DisputeRewardBP:      5000,
		DisputeStandingHours: 24,
		DisputeBondBP:        2000,
		DisputeSlashPriceX:   1000,
	}
}

// Validate checks the parameters' invariants.
func (p Params) Validate() error {
	switch {
	case p.SLAWindowHours == 0 || p.SLAWindowHours > 24*90:
		return reject(CodeInvalidParams, "SLA window %d hours outside [1, 2160]", p.SLAWindowHours)
	case p.StandingBondedBP > BasisPoints || p.StandingAvailBP > BasisPoints ||
		p.StandingBondedBP+p.StandingAvailBP != BasisPoints:
		return reject(CodeInvalidParams, "standing weights %d + %d bp must sum to %d",
			p.StandingBondedBP, p.StandingAvailBP, BasisPoints)
	case p.HourSeconds == 0 || p.HourSeconds > 86400:
		return reject(CodeInvalidParams, "hour length %d s outside [1, 86400]", p.HourSeconds)
	case p.VotingPeriodBlocks == 0 || p.VotingPeriodBlocks > 1_000_000:
		return reject(CodeInvalidParams, "voting period %d blocks outside [1, 1000000]", p.VotingPeriodBlocks)
	case p.WithdrawDelayBlocks < MinWithdrawDelayBlocks || p.WithdrawDelayBlocks > 10_000_000:
		return reject(CodeInvalidParams, "withdraw delay %d blocks outside [%d, 10000000]", p.WithdrawDelayBlocks, MinWithdrawDelayBlocks)
	case p.DisputeMinBond == 0:
		return reject(CodeInvalidParams, "dispute minimum bond is 0")
	case p.DisputeWindowBlocks == 0 || p.DisputeWindowBlocks > 10_000_000:
		return reject(CodeInvalidParams, "dispute window %d blocks outside [1, 10000000]", p.DisputeWindowBlocks)
	case p.DisputeCommittee == 0 || p.DisputeCommittee > MaxCommittee:
		return reject(CodeInvalidParams, "dispute committee of %d outside [1, %d]", p.DisputeCommittee, MaxCommittee)
	case p.DisputeVerdictBlocks < 2 || p.DisputeVerdictBlocks > 100_000:
		return reject(CodeInvalidParams, "dispute verdict limit %d blocks outside [2, 100000]", p.DisputeVerdictBlocks)
	case p.DisputeSlashBP > BasisPoints || p.DisputeRewardBP > BasisPoints:
		return reject(CodeInvalidParams, "dispute slash %d bp and reward %d bp must be at most %d", p.DisputeSlashBP, p.DisputeRewardBP, BasisPoints)
	case p.DisputeBondBP > 100*BasisPoints || p.DisputeSlashPriceX > 1_000_000:
		return reject(CodeInvalidParams, "dispute bond %d bp over 100× the price or slash %d× the price over 1000000×", p.DisputeBondBP, p.DisputeSlashPriceX)
	case p.DisputeStandingHours > 24*365:
		return reject(CodeInvalidParams, "dispute standing penalty %d hours over a year", p.DisputeStandingHours)
	}
	return nil
}

// Surcharge returns the surcharge of a verification level by name.
func (p Params) Surcharge(level string) (uint64, bool) {
	switch level {
	case "none":
		return p.SurchargeNone, true
	case "receipt":
		return p.SurchargeReceipt, true
	case "optimistic":
		return p.SurchargeOptimistic, true
	case "tee":
		return p.SurchargeTEE, true
	}
	return 0, false
}

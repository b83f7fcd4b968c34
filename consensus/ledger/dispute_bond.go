package ledger

// Bond sizing. Both sides of a dispute stake in proportion to the job the
// dispute is about, not a flat figure that dwarfs it.
//
// The disputer's bond pays for the committee's work when the dispute is
// false (it goes to the accused operator). A committee re-executes the
// prompt and the answer up to the disputed chunk's end by one prefill;
// scripts/bench-disputes measures that at a few percent of the job's price
// for a first-chunk dispute (the chunk every cheat measured fails first).
// DisputeBondBP, 10 % of the price by default, covers that at least twice,
// and DisputeMinBond, 100 µ by default (about one minimum optimistic call
// at the devnet's rate card), keeps a dispute over a free or tiny job from
// costing nothing while 64 may be open at once.
//
// The provider's slash deters cheating: serving an answer dishonestly
// gains at most what the answer was paid, and a cheat is caught only when
// someone disputes it, so the slash must exceed the gain divided by the
// chance of a dispute. DisputeSlashPriceX, 1000× the payment by default,
// deters a cheat audited once in a thousand answers; the slash never
// exceeds DisputeSlashBP of the serving bond (the provider's exposure:
// what it put up to be paid at all), so one dispute over a tiny job can
// no longer take a tenth of a bond sized for thousands of them.

// DisputeBond is the least bond a dispute about a record of price may be
// opened with: DisputeBondBP of the price, and at least DisputeMinBond.
func DisputeBond(p Params, price uint64) uint64 {
	return max(p.DisputeMinBond, mulDiv(price, p.DisputeBondBP, BasisPoints))
}

// DisputeSlash is what a conviction takes from a serving bond of bond
// when the provider was credited paid for the disputed record:
// DisputeSlashBP of the bond, at most DisputeSlashPriceX times paid (no
// such cap when DisputeSlashPriceX is 0).
func DisputeSlash(p Params, bond, paid uint64) uint64 {
	slash := mulDiv(bond, p.DisputeSlashBP, BasisPoints)
	if p.DisputeSlashPriceX == 0 {
		return slash
	}
	if paid > ^uint64(0)/p.DisputeSlashPriceX {
		return slash // the cap is beyond any bond
	}
	return min(slash, paid*p.DisputeSlashPriceX)
}

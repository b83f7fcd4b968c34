package ledger

// Bond sizing. Both sides of a dispute stake in proportion to the job the
// dispute is about, not a flat figure that dwarfs it.
//
// The disputer's bond is what a false dispute costs its disputer (it goes
// to the accused operator), and it grows with the chunk the dispute names,
// as the committee's work does: a member prefills the prompt and the
// answer up to that chunk's end. scripts/bench-disputes measured a
// committee of 5 on the ~100M model (2 threads, at the provider's rate
// per compute second) at 14 % of a 512-token job's price for the first
// chunk and 74 % for the sixteenth, 42 % and 73 % for a 128-token job.
// DisputeBondBP, 20 % of the price per chunk up to the one named, puts a
// first-chunk dispute's bond among those costs and a later chunk's above
// them, and makes naming the first failing chunk (where every cheat
// measured fails) the cheapest. DisputeMinBond, 100 µ by default (about
// one minimum optimistic call at the devnet's rate card), keeps a dispute
// over a free or tiny job from costing nothing while 64 may be open.
//
// The provider's slash deters cheating: serving an answer dishonestly
// gains at most what the answer was paid, and a cheat is caught only when
// someone disputes it, so the slash must exceed the gain divided by the
// chance of a dispute. DisputeSlashPriceX, 1000× the payment by default,
// deters a cheat audited once in a thousand answers; the slash never
// exceeds DisputeSlashBP of the serving bond (the provider's exposure:
// what it put up to be paid at all), so one dispute over a tiny job can
// no longer take a tenth of a bond sized for thousands of them.

// DisputeBond is the least bond a dispute about a record of price naming
// chunk may be opened with: DisputeBondBP of the price per chunk up to the
// one named (chunk+1 of them; an expert batch names chunk 0), and at
// least DisputeMinBond.
func DisputeBond(p Params, price uint64, chunk uint32) uint64 {
	// mulDiv saturates: a bond beyond any balance refuses the dispute.
	return max(p.DisputeMinBond, mulDiv(price, p.DisputeBondBP*(uint64(chunk)+1), BasisPoints))
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

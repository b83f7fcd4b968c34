package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
)

// checker holds what the invariants are checked against.
type checker struct {
	cl       *cluster
	ref      *referee
	out      func(format string, args ...any)
	peer     map[*proc]string // provider peer IDs
	machine  map[*proc]string // provider machine IDs
	operator map[*proc]string // provider operator accounts
	payers   []string         // every escrow payer: the buyer and the validators (probes)
	start    ledgerSnap

	violations []string
}

func (c *checker) violate(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

// chainAPI is a live validator's API, where the chain is read.
func (c *checker) chainAPI() string {
	for _, v := range c.cl.validators {
		if v.live() && heightAt(v.api) > 0 {
			return v.api
		}
	}
	return c.cl.validators[0].api
}

func (c *checker) accounts() []string {
	out := []string{feePool}
	for _, p := range c.cl.providers {
		out = append(out, c.operator[p])
	}
	return out
}

// received maps the request digest of every record the buyers hold to its
// call; a digest received twice is a violation.
func (c *checker) received(calls []*callRecord) map[string]*callRecord {
	got := map[string]*callRecord{}
	for _, k := range calls {
		r := k.record()
		if r == nil {
			continue
		}
		if prev, dup := got[r.RequestDigest]; dup {
			c.violate("calls %d and %d received records with the same request digest %s", prev.ID, k.ID, r.RequestDigest)
		}
		got[r.RequestDigest] = k
	}
	return got
}

// settledSince lists every record settled to any provider after the
// starting snapshot, up to height to, as the checker's view holds them.
func (c *checker) settledSince(api string, to int64, faults []*faultRecord) ([]chainapi.PaymentView, error) {
	var all []chainapi.PaymentView
	for _, p := range c.cl.providers {
		recs, err := payments(api, chainapi.PaymentsParams{Provider: c.machine[p], From: c.start.height + 1, To: to})
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	return chainView(all, c.machine, faults), nil
}

// quiesce waits until every received record is on chain and the set of
// settled records stops growing (a gateway submits what its providers did
// not after [settle] grace), up to limit; it returns the end height.
func (c *checker) quiesce(got map[string]*callRecord, limit time.Duration, faults []*faultRecord) int64 {
	start, last, stable := time.Now(), -1, time.Now()
	for {
		api := c.chainAPI()
		h := heightAt(api)
		recs, err := c.settledSince(api, h, faults)
		if err == nil {
			on := map[string]bool{}
			for _, r := range recs {
				on[r.RequestDigest] = true
			}
			missing := 0
			for d := range got {
				if !on[d] {
					missing++
				}
			}
			if len(recs) != last {
				last, stable = len(recs), time.Now()
			}
			if missing == 0 && time.Since(stable) > 5*time.Second {
				return h
			}
		}
		if time.Since(start) > limit {
			return h
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkSettlement: every record received is settled exactly once; no
// record is settled twice; the money adds up between the two snapshots.
func (c *checker) checkSettlement(got map[string]*callRecord, faults []*faultRecord, failedAtKill int) (settled int, err error) {
	api := c.chainAPI()
	end, err := snapshot(api, c.payers, c.accounts())
	if err != nil {
		return 0, err
	}
	recs, err := c.settledSince(api, end.height, faults)
	if err != nil {
		return 0, err
	}
	times := map[string]int{}
	var sumPrice, sumFees uint64
	byEscrow := map[[2]string]uint64{}
	credit := map[string]uint64{}
	opOf := map[string]string{}
	for _, p := range c.cl.providers {
		opOf[c.machine[p]] = c.operator[p]
	}
	for _, r := range recs {
		times[r.RequestDigest]++
		sumPrice += r.Price
		sumFees += r.Fee
		byEscrow[[2]string{r.Payer, r.Settler}] += r.Price
		if r.Fee > r.Price {
			c.violate("record %s: fee %d above its price %d", r.RequestDigest, r.Fee, r.Price)
			continue
		}
		credit[opOf[r.Provider]] += r.Price - r.Fee
	}
	for d, n := range times {
		if n != 1 {
			c.violate("record %s settled %d times", d, n)
		}
	}
	unreceived := 0
	for _, r := range recs {
		if r.Payer == c.cl.m.BuyerChainAccount {
			if _, ok := got[r.RequestDigest]; !ok {
				unreceived++
			}
		}
	}
	for d, k := range got {
		if times[d] != 1 {
			r := k.record()
			c.violate("call %d via %s: its payment record %s (price %d) settled %d times, want exactly once", k.ID, k.Router, d, r.Price, times[d])
		}
	}
	// A gateway killed between signing a record and answering leaves a
	// record the buyer never saw; each must match a call that failed then.
	if unreceived > failedAtKill {
		c.violate("%d buyer records settled that no call received; only %d calls failed in gateway faults", unreceived, failedAtKill)
	}
	c.out("settlement: %d records settled since height %d (%d of them the buyers' received, %d signed for calls that failed), Σ price %d, fees %d",
		len(recs), c.start.height, len(got), unreceived, sumPrice, sumFees)
	// Money: every escrow fell by its records' Σ price and by what it put
	// into standby streams less their refunds; every operator rose by its
	// records' Σ (price − fee) and by its streams' claims; the fee pool by
	// the fees. Closed streams are not listed, so streams are checked in
	// sum: what escrows paid beyond their records = what operators got
	// beyond theirs + what open streams still hold (less what they held
	// at the start).
	keys := map[[2]string]bool{}
	for k := range c.start.escrows {
		keys[k] = true
	}
	for k := range end.escrows {
		keys[k] = true
	}
	var debits, escrowExtra uint64
	for k := range keys {
		before, after := c.start.escrows[k], end.escrows[k]
		if after > before {
			c.violate("escrow (%s, %s) rose from %d to %d during the run", short(k[0]), short(k[1]), before, after)
			continue
		}
		debits += before - after
		if before-after < byEscrow[k] {
			c.violate("escrow (%s, %s) fell by %d, less than its settled records' %d", short(k[0]), short(k[1]), before-after, byEscrow[k])
			continue
		}
		escrowExtra += before - after - byEscrow[k]
	}
	var credits, operatorExtra uint64
	ops := append([]string(nil), c.accounts()[1:]...)
	sort.Strings(ops)
	for _, op := range ops {
		if end.balances[op] < c.start.balances[op] {
			c.violate("operator %s fell from %d to %d", short(op), c.start.balances[op], end.balances[op])
			continue
		}
		rose := end.balances[op] - c.start.balances[op]
		if rose < credit[op] {
			c.violate("operator %s went from %d to %d, less than its records credit (%d)", short(op), c.start.balances[op], end.balances[op], credit[op])
			continue
		}
		credits += rose
		operatorExtra += rose - credit[op]
	}
	var fees uint64
	if end.balances[feePool] >= c.start.balances[feePool] {
		fees = end.balances[feePool] - c.start.balances[feePool]
	}
	if fees != sumFees {
		c.violate("the fee pool rose by %d, the records' fees are %d", fees, sumFees)
	}
	held, heldBefore := end.streamBalance(), c.start.streamBalance()
	for id, st := range end.streams {
		if st.Claimed+st.Refunded > st.Deposit || st.Closed {
			c.violate("stream %s: deposit %d, claimed %d, refunded %d, closed %v: listed open with deposit ≠ claimed + refunded + balance",
				short(id), st.Deposit, st.Claimed, st.Refunded, st.Closed)
		}
	}
	if escrowExtra+heldBefore != operatorExtra+held {
		c.violate("standby streams: escrows paid %d beyond their records and open streams held %d at the start; operators got %d beyond theirs and open streams hold %d",
			escrowExtra, heldBefore, operatorExtra, held)
	}
	if debits+heldBefore != credits+fees+held {
		c.violate("Σ escrow debits %d + streams held before %d ≠ Σ operator credits %d + fees %d + streams held %d", debits, heldBefore, credits, fees, held)
	}
	c.out("money: heights %d → %d, Σ escrow debits %d = Σ operator credits %d + fees %d + open streams %d − %d: %v",
		c.start.height, end.height, debits, credits, fees, held, heldBefore, debits+heldBefore == credits+fees+held)
	c.out("standby streams: escrows paid %d beyond records, operators claimed %d, %d streams open holding %d",
		escrowExtra, operatorExtra, len(end.streams), held)
	return len(recs), nil
}

func short(s string) string { return s[:min(len(s), 10)] }

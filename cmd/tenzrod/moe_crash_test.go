package main

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/provider"
)

// expertPart is one holder's line of an answer's tenzro.experts.
type expertPart struct {
	Holder       string `json:"holder"`
	Machine      string `json:"machine"`
	ExpertTokens uint64 `json:"expert_tokens"`
	Price        uint64 `json:"price"`
	Paid         uint64 `json:"paid"`
	Reason       string `json:"reason"`
	Record       string `json:"record"` // the request digest of the holder's payment record
}

// moeBook is what the buyer of MoE calls holds: buyerBook's records of
// the calls, and each holder line that says a record was signed to it.
type moeBook struct {
	*buyerBook
	holders map[string]expertPart // by record digest
	unpaid  map[string]int        // holder lines without a record, by reason
}

func (b *moeBook) note(r *signedRecord, es []expertPart, err error) {
	b.buyerBook.note(r, err)
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range es {
		if e.Paid == 0 {
			b.unpaid[e.Reason]++
			continue
		}
		if _, seen := b.holders[e.Record]; seen {
			b.twice = append(b.twice, "holder record "+e.Record)
		}
		b.holders[e.Record] = e
	}
}

// paidTo counts the holder records the buyer was shown for machine.
func (b *moeBook) paidTo(machine string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.holders {
		if e.Machine == machine {
			n++
		}
	}
	return n
}

// moeCallers runs n goroutines of paid MoE calls through api until stop,
// which lets the calls under way finish: a call cancelled at the buyer
// may still be answered, billed and its holders paid, and the test would
// not know its records.
func moeCallers(api, token string, n int, b *moeBook) (stop func()) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() {
			for i := 0; !quit.Load(); i++ {
				var es []expertPart
				r, err := paidChat(context.Background(), api, token, provider.DevnetMoEModelName,
					chatOpts{n: c*1_000_000 + i, stream: i%2 == 1, maxTokens: 6, experts: &es})
				b.note(r, es, err)
				if err != nil {
					time.Sleep(100 * time.Millisecond) // the serving provider is down: no busy loop
				}
			}
		})
	}
	return func() { quit.Store(true); wg.Wait() }
}

// TestDevnetMoEHoldersPaidAcrossKills: MoE calls flow through a devnet
// whose serving provider pays two expert holders from its escrow, while
// the serving provider and then a holder are killed with SIGKILL and
// restarted. Every holder record an answer named settles exactly once at
// the price the answer showed, the serving provider's escrow falls by
// exactly what settled to the holders, and each holder's operator gains
// exactly its records' prices less their fees: nothing signed is lost or
// paid twice across either crash.
func TestDevnetMoEHoldersPaidAcrossKills(t *testing.T) {
	t0 := time.Now()
	bin := buildBinary(t)
	// No probes: a validator's paid probe of the MoE model pays the holders
	// too, records no buyer of this test holds.
	ps := startDevnet(t, bin, 1, 1, 1, "--moe-holders", "2", "--probe-interval", "0s")
	m := ps.M
	gw, v0, serving := ps.node("gateway-0"), ps.node("validator-0"), ps.node("provider-0")
	holders := []devnet.NodeEntry{ps.node("holder-0"), ps.node("holder-1")}
	provs := append([]devnet.NodeEntry{serving}, holders...)
	// Holders serve no model of their own: the gateway does not list them,
	// and they are ready once answers name them paid.
	waitFor(t, 60*time.Second, "the serving provider registered and up at the gateway", func() bool { return registeredUp(gw.API, peerOf(serving)) })
	waitFor(t, 60*time.Second, "the gateway quotes the MoE model", func() bool { return quotedAt(gw.API, provider.DevnetMoEModelName) > 0 })
	requireNoTxFee(t, v0.API)
	payer := accountOfHome(t, serving.Home) // pays the holders, from its escrow with itself
	ops, machines := operatorsOf(t, provs)  // the serving provider's, then the holders'
	// A holder's registration takes its bond from its operator's balance:
	// it must be on chain before the snapshot the balances are checked
	// from.
	for i, p := range provs {
		waitFor(t, 60*time.Second, p.Name+" registered on chain", func() bool {
			var st ledger.Standing
			return rpcCall(v0.API, "tenzro_getStanding", chainapi.StandingParams{MachineID: machines[i]}, &st) == nil && st.BondLive
		})
	}
	snap0 := snapshotAt(t, v0.API, payer, append(slices.Clone(ops), feePool))
	if _, ok := snap0.escrows[payer]; !ok {
		t.Fatalf("the serving provider has no escrow with itself: %v", snap0.escrows)
	}
	t.Logf("devnet up after %s; escrow (serving, serving) %d at height %d", time.Since(t0).Round(time.Second), snap0.escrows[payer], snap0.height)

	book := &moeBook{buyerBook: newBuyerBook(), holders: map[string]expertPart{}, unpaid: map[string]int{}}
	book.setPhase("before kills")
	stop := moeCallers(m.Gateway, m.BuyerToken, 2, book)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitHolderPay := func(what string) {
		t.Helper()
		base := []int{book.paidTo(machines[1]), book.paidTo(machines[2])}
		waitFor(t, 90*time.Second, what, func() bool {
			return book.paidTo(machines[1]) >= base[0]+3 && book.paidTo(machines[2]) >= base[1]+3
		})
	}
	waitHolderPay("both holders paid in the first MoE calls")

	book.setPhase("serving provider kill")
	ps.restart(serving, serving.PID)
	killed := time.Now()
	waitFor(t, 60*time.Second, "the serving provider up at the gateway again", func() bool {
		return registeredUp(gw.API, peerOf(serving)) && quotedAt(gw.API, provider.DevnetMoEModelName) > 0
	})
	waitHolderPay("both holders paid after the serving provider's restart")
	t.Logf("serving provider killed and restarted: paying both holders again %s after the kill", time.Since(killed).Round(time.Millisecond))

	book.setPhase("holder kill")
	ps.restart(holders[0], holders[0].PID)
	killed = time.Now()
	waitHolderPay("both holders paid after holder-0's restart")
	t.Logf("holder-0 killed and restarted: paid again %s after the kill", time.Since(killed).Round(time.Millisecond))
	stop()
	stopped = true

	book.mu.Lock()
	calls, held := maps.Clone(book.recs), maps.Clone(book.holders)
	failed := 0
	for _, n := range book.fails {
		failed += n
	}
	t.Logf("%d MoE calls answered with a signed record, %d holder records shown to the buyer, holder lines unpaid %v, failures %v",
		book.ok, len(held), book.unpaid, book.fails)
	book.logFailures(t)
	book.mu.Unlock()

	settled := func(who string) map[string]int {
		return settledTimes(t, v0.API, chainapi.PaymentsParams{Payer: who, From: snap0.height + 1})
	}
	start := time.Now()
	waitFor(t, 120*time.Second, "every holder record and buyer record the answers named settled", func() bool {
		return settledAll(settled(payer), held) && settledAll(settled(m.BuyerChainAccount), calls)
	})
	t.Logf("every record settled %s after the callers stopped", time.Since(start).Round(time.Millisecond))
	snap1 := snapshotAt(t, v0.API, payer, append(slices.Clone(ops), feePool))
	checkHolderMoney(t, v0.API, snap0, snap1, payer, m.BuyerChainAccount, ops, machines, held, calls, failed)
	t.Logf("total %s", time.Since(t0).Round(time.Second))
}

// checkHolderMoney asserts the MoE money between snap0 and snap1: ops
// and machines are the serving provider's and then the holders'.
func checkHolderMoney(t *testing.T, api string, snap0, snap1 chainSnap, payer, buyer string, ops, machines []string,
	held map[string]expertPart, calls map[string]signedRecord, failed int) {
	t.Helper()
	times := settledTimes(t, api, chainapi.PaymentsParams{Payer: buyer, From: 1, To: snap1.height})
	for d, r := range calls {
		if times[d] != 1 {
			t.Errorf("the buyer's record %s (price %d) settled %d times, want exactly once", d, r.Price, times[d])
		}
	}
	times = map[string]int{}
	var sum uint64
	var extras int
	for _, r := range paymentsIn(t, api, chainapi.PaymentsParams{Payer: payer, From: 1, To: snap1.height}).Records {
		times[r.RequestDigest]++
		if r.Height <= snap0.height {
			continue
		}
		sum += r.Price
		e, ok := held[r.RequestDigest]
		switch {
		case !ok:
			extras++
		case e.Paid != r.Price || e.Machine != r.Provider:
			t.Errorf("holder record %s settled at %d to %s; the answer showed %d to %s", r.RequestDigest, r.Price, r.Provider, e.Paid, e.Machine)
		}
	}
	for d, n := range times {
		if n != 1 {
			t.Errorf("holder record %s settled %d times", d, n)
		}
	}
	for d, e := range held {
		if times[d] != 1 {
			t.Errorf("holder record %s (paid %d to %s) settled %d times, want exactly once", d, e.Paid, e.Machine, times[d])
		}
	}
	// A call the serving provider had paid its holders for when it was
	// killed was never answered: its holder records settle unseen. So may
	// those of any call that failed, one per holder.
	t.Logf("holder records settled: Σ %d, %d of them never shown to the buyer (%d calls failed)", sum, extras, failed)
	if extras > 2*failed {
		t.Errorf("%d holder records settled that no answer named; at most those of the %d failed calls, 2 holders each, may be", extras, failed)
	}
	checkEscrowFell(t, snap0, snap1, payer, "(serving, serving)", sum, "Σ of the holder records settled")
	// The serving provider pays its holders from its escrow, not its
	// balance: every operator's balance rises by what it was paid.
	checkOperatorsRose(t, api, snap0, snap1, ops, machines, payerNamed(buyer, "serving provider"))
}

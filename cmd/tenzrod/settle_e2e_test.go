package main

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
)

// TestDevnetCrashSafeSettlement is #11's crash-safety acceptance on real
// processes: 4 validators, 2 providers, a gateway. While the buyer's two
// callers make paid calls through the gateway, a provider, then the
// gateway, then a validator are killed with SIGKILL and restarted. Then
// every record the buyer received settles exactly once and the money
// adds up exactly: the buyer's escrow fell by the Σ price of the gateway's
// settled records (those received, plus any signed while the gateway was
// dying, listed), each operator rose by its records' Σ price − fees, the
// fee pool by the fees. A last batch settles with the gateway killed for
// good (the providers alone collect it), and `tenzrod join` with the
// buyer's key pays a call from the user's own escrow.
func TestDevnetCrashSafeSettlement(t *testing.T) {
	t0 := time.Now()
	bin := buildBinary(t)
	built := time.Since(t0)
	ps := startDevnet(t, bin, 4, 2, 1)
	m := ps.M
	gw, v0, v3 := ps.node("gateway-0"), ps.node("validator-0"), ps.node("validator-3")
	provs := []devnet.NodeEntry{ps.node("provider-0"), ps.node("provider-1")}
	for _, p := range provs {
		waitAll(t, m.Nodes, 60*time.Second, p.Name+" registered and up", func(api string) bool { return registeredUp(api, peerOf(p)) })
	}
	t.Logf("binary built in %s; devnet up, both providers registered and up everywhere after %s", built.Round(time.Second), time.Since(t0).Round(time.Second))

	requireNoTxFee(t, v0.API)
	buyer, settler := m.BuyerChainAccount, accountOfHome(t, gw.Home)
	ops, machines := operatorsOf(t, provs)
	snap0 := snapshotAt(t, v0.API, buyer, append(slices.Clone(ops), feePool))
	if _, ok := snap0.escrows[settler]; !ok {
		t.Fatalf("the buyer has no escrow with the gateway's account %s: %v", settler, snap0.escrows)
	}
	if _, ok := snap0.escrows[buyer]; ok {
		t.Fatalf("the buyer's own escrow (buyer, buyer) exists before join opened it: %v", snap0.escrows)
	}
	t.Logf("snapshot at height %d: escrow (buyer, gateway) %d, operators %d / %d, fee pool %d",
		snap0.height, snap0.escrows[settler], snap0.balances[ops[0]], snap0.balances[ops[1]], snap0.balances[feePool])

	// Steps 3 and 4: calls flow while a provider, the gateway and a
	// validator are each killed and restarted.
	book := newBuyerBook()
	book.setPhase("before kills")
	stop := callers(m.Gateway, m.BuyerToken, m.Model, 2, book)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitCalls(t, book, 10, "first paid calls through the gateway")
	phase := time.Now()

	// The provider dies in the middle of long streams. The callers hold
	// off meanwhile: the surviving provider (4 slots) must have room to
	// continue every stream, or it answers busy and nothing can.
	book.setPhase("provider kill")
	book.hold.Store(true)
	waitFor(t, 30*time.Second, "the callers' calls finished", func() bool { return book.inFlight.Load() == 0 })
	// The victim is the provider the gateway has been choosing most, so
	// that the long streams are likely on it.
	victim := provs[0]
	book.mu.Lock()
	served := map[string]int{}
	for _, r := range book.recs {
		served[r.Provider]++
	}
	book.mu.Unlock()
	if served[machines[1]] > served[machines[0]] {
		victim = provs[1]
	}
	cont0, _ := metric(gw.API, "tenzro_router_continuations_total")
	const long = 3
	streams := startLongStreams(m.Gateway, m.BuyerToken, m.Model, long, book)
	streams.text.Wait()
	ps.restart(victim, victim.PID)
	killedAt := time.Now()
	waitFor(t, 60*time.Second, victim.Name+" restarted answers", func() bool { return heightAt(victim.API) > 0 })
	waitAll(t, m.Nodes, 60*time.Second, victim.Name+" up again", func(api string) bool { return registeredUp(api, peerOf(victim)) })
	waitFor(t, 60*time.Second, "gateway quotes both providers again", func() bool { return quotedAt(gw.API, m.Model) == 2 })
	t.Logf("%s killed mid-stream and restarted: up at every node after %s", victim.Name, time.Since(killedAt).Round(time.Millisecond))
	streams.done.Wait()
	book.hold.Store(false)
	cont, _ := metric(gw.API, "tenzro_router_continuations_total")
	t.Logf("%d long streams had streamed text when %s was killed: %d answered with a payment record, %.0f continued on the other provider, failed: %v",
		long, victim.Name, streams.ok, cont-cont0, streams.errs)
	if streams.ok != long {
		t.Errorf("%d of %d streams in flight at the provider's kill failed: %v", long-streams.ok, long, streams.errs)
	}
	waitCalls(t, book, 10, "paid calls after the provider's restart")

	book.setPhase("gateway kill")
	gwPID := ps.restart(gw, gw.PID)
	killedAt = time.Now()
	waitFor(t, 60*time.Second, "restarted gateway quotes both providers", func() bool { return quotedAt(gw.API, m.Model) == 2 })
	took := waitCalls(t, book, 10, "paid calls through the restarted gateway")
	t.Logf("gateway killed mid-stream and restarted: routing again %s after the kill", (time.Since(killedAt) - took).Round(time.Millisecond))
	for _, p := range provs {
		servedBy(t, m, gw.API, p, book)
	}

	book.setPhase("validator kill")
	ps.restart(v3, v3.PID)
	killedAt = time.Now()
	waitFor(t, 60*time.Second, v3.Name+" restarted and caught up", func() bool {
		h := heightAt(v3.API)
		return h > 0 && h >= heightAt(v0.API)-1
	})
	t.Logf("%s killed and restarted: caught up with the chain after %s", v3.Name, time.Since(killedAt).Round(time.Millisecond))
	waitCalls(t, book, 10, "paid calls after the validator's restart")
	stop()
	stopped = true
	book.mu.Lock()
	received := maps.Clone(book.recs)
	t.Logf("calls phase %s: %d paid calls answered with a signed record, failures %v", time.Since(phase).Round(time.Millisecond), book.ok, book.fails)
	book.logFailures(t)
	book.mu.Unlock()

	// Step 7 first: it runs while the kill phase's records settle.
	joined := joinAndPay(t, ps, v0)

	// Step 5: every record the buyer received settles.
	settleStart := time.Now()
	waitFor(t, 90*time.Second, "every record the buyer received settled", func() bool {
		got := settledTimes(t, v0.API, chainapi.PaymentsParams{Payer: buyer, From: snap0.height + 1})
		return settledAll(got, received) && got[joined.RequestDigest] > 0
	})
	t.Logf("all %d records of the calls phase (and join's) settled %s after the callers stopped", len(received), time.Since(settleStart).Round(time.Millisecond))
	ps.stopPID(joined.pid)

	// Nothing signed is lost across the gateway's kill: every answer the
	// buyer holds has its receipt at the gateway (it is made durable
	// before the answer goes out).
	for d, r := range received {
		var v map[string]any
		if r.Nonce == "" {
			t.Errorf("record %.16s: the response carried no receipt nonce", d)
		} else if err := rpcCall(gw.API, "tenzro_getReceipt", map[string]string{"nonce": r.Nonce}, &v); err != nil {
			t.Errorf("record %.16s: its receipt %s is gone from the gateway: %v", d, r.Nonce, err)
		}
	}

	// Step 6: a last batch, then the gateway dies for good as soon as its
	// providers hold the batch's records.
	lastBatch := providerCollected(t, ps, gw, v0, gwPID, buyer, snap0.height)
	for d, r := range lastBatch {
		received[d] = r
	}

	// The money, exactly, at one height after everything settled.
	snap1 := snapshotAt(t, v0.API, buyer, append(slices.Clone(ops), feePool))
	checkMoney(t, v0.API, snap0, snap1, buyer, settler, ops, machines, received, joined)
	t.Logf("total %s", time.Since(t0).Round(time.Second))
}

// joinedCall is the laptop's paid call.
type joinedCall struct {
	signedRecord
	pid int
}

package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// checkMoney asserts every invariant between snap0 and snap1.
func checkMoney(t *testing.T, api string, snap0, snap1 chainSnap, buyer, settler string, ops, machines []string,
	received map[string]signedRecord, joined joinedCall) {
	t.Helper()
	all := paymentsIn(t, api, chainapi.PaymentsParams{Payer: buyer, From: 1, To: snap1.height})
	times := map[string]int{}
	var viaGateway []chainapi.PaymentView
	for _, r := range all.Records {
		times[r.RequestDigest]++
		if r.Settler == settler {
			viaGateway = append(viaGateway, r)
		}
	}
	for d, n := range times {
		if n != 1 {
			t.Errorf("record %s settled %d times", d, n)
		}
	}
	var sumReceived, sumSettled uint64
	for d, r := range received {
		sumReceived += r.Price
		if times[d] != 1 {
			t.Errorf("received record %s (price %d, provider %s) settled %d times, want exactly once", d, r.Price, r.Provider, times[d])
		}
	}
	var extras []string
	for _, r := range viaGateway {
		if r.Height <= snap0.height {
			t.Errorf("record %s of the gateway settled at %d, before the snapshot at %d", r.RequestDigest, r.Height, snap0.height)
		}
		sumSettled += r.Price
		got, ok := received[r.RequestDigest]
		switch {
		case !ok:
			extras = append(extras, fmt.Sprintf("%s (price %d, provider %s, height %d)", r.RequestDigest, r.Price, r.Provider, r.Height))
		case got.Price != r.Price || got.Provider != r.Provider:
			t.Errorf("record %s settled at price %d to %s; the buyer was given price %d to %s", r.RequestDigest, r.Price, r.Provider, got.Price, got.Provider)
		}
	}
	sort.Strings(extras)
	t.Logf("settled through the gateway: %d records, Σ price %d; received by the buyer: %d, Σ %d; signed but never received (the gateway's kill window): %d %v",
		len(viaGateway), sumSettled, len(received), sumReceived, len(extras), extras)
	if len(extras) > 2 {
		t.Errorf("%d records settled that the buyer never received; at most the 2 calls in flight when the gateway was killed may be", len(extras))
	}
	if sumSettled < sumReceived {
		t.Errorf("Σ settled %d < Σ received %d", sumSettled, sumReceived)
	}
	checkEscrowFell(t, snap0, snap1, settler, "(buyer, gateway)", sumSettled, "Σ settled")
	checkOperatorsRose(t, api, snap0, snap1, ops, machines, payerNamed(buyer, "probe"))
	if e, ok := snap1.escrows[buyer]; !ok || e != joinDeposit-joined.Price {
		t.Errorf("escrow (buyer, buyer) is %d (exists %v), want the deposit %d − the laptop call's price %d", e, ok, joinDeposit, joined.Price)
	}
	if times[joined.RequestDigest] != 1 {
		t.Errorf("the laptop's record %s settled %d times", joined.RequestDigest, times[joined.RequestDigest])
	}
}

// checkOperatorsRose asserts that between the snapshots each operator
// ops[i] rose by the Σ price − fees of the records settled to machines[i],
// less at most maxRefusedFees (fee_per_record for each record of its own
// that its collector submitted and the chain refused: a record caught in a
// crash window, such as one signed while its provider was being killed),
// and that the fee pool rose by the settled records' fees plus what the
// operators (and at most as much again the gateway) paid for refusals (ops
// must name every machine paid meanwhile); payer names a record's payer
// in the log.
func checkOperatorsRose(t *testing.T, api string, snap0, snap1 chainSnap, ops, machines []string, payer func(chainapi.PaymentView) string) {
	t.Helper()
	var params ledger.Params
	if err := rpcCall(api, "tenzro_getParams", nil, &params); err != nil {
		t.Fatal(err)
	}
	maxRefusedFees := maxRefusedRecords * params.FeePerRecord
	var fees, refusedFees uint64
	for i, op := range ops {
		pv := paymentsIn(t, api, chainapi.PaymentsParams{Provider: machines[i], From: snap0.height + 1, To: snap1.height})
		byPayer := map[string]int{}
		for _, r := range pv.Records {
			byPayer[payer(r)]++
		}
		rose := snap1.balances[op] - snap0.balances[op]
		t.Logf("provider %d: %d records settled to it %v, Σ price %d, fees %d; operator rose %d", i, pv.Count, byPayer, pv.Total, pv.Fees, rose)
		want := pv.Total - pv.Fees
		if rose > want || want-rose > maxRefusedFees {
			t.Errorf("provider %d's operator rose by %d (%d → %d), want Σ price %d − fees %d, less at most %d for refused records",
				i, rose, snap0.balances[op], snap1.balances[op], pv.Total, pv.Fees, maxRefusedFees)
			continue
		}
		if want != rose {
			t.Logf("provider %d's operator paid %d µ for records the chain refused", i, want-rose)
		}
		fees, refusedFees = fees+pv.Fees, refusedFees+(want-rose)
	}
	// The gateway's outbox may have paid for the same refused records
	// (its balance is not snapshotted): at most as much again.
	if rose := snap1.balances[feePool] - snap0.balances[feePool]; rose < fees+refusedFees || rose-fees-refusedFees > maxRefusedFees {
		t.Errorf("fee pool rose by %d, want the records' fees %d, the operators' refused records' %d and at most %d of the gateway's", rose, fees, refusedFees, maxRefusedFees)
	}
}

// maxRefusedRecords bounds the records of its own an honest provider's
// collector may see refused in these crash tests: the few calls in flight
// at each kill.
const maxRefusedRecords = 4

// lineOf returns the first line of out starting with prefix, trimmed.
func lineOf(out, prefix string) (string, bool) {
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			return strings.TrimSpace(s), true
		}
	}
	return "", false
}

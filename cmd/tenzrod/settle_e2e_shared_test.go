package main

import (
	"testing"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
)

// requireNoTxFee fails the test unless the chain at api charges no
// per-transaction fee: the crash tests' invariants account for
// per-record fees only, and a provider's operator also signs its
// settlements, so a fee would come off its balance beside the per-record
// fees tenzro_getPayments reports.
func requireNoTxFee(t *testing.T, api string) {
	t.Helper()
	var params ledger.Params
	if err := rpcCall(api, "tenzro_getParams", nil, &params); err != nil {
		t.Fatal(err)
	}
	if params.FeePerTx != 0 {
		t.Fatalf("fee_per_tx is %d; this test accounts for per-record fees only", params.FeePerTx)
	}
}

// operatorsOf returns, for each provider, its operator's chain account
// (the key in its home) and its machine ID (as it reports it).
func operatorsOf(t *testing.T, provs []devnet.NodeEntry) (ops, machines []string) {
	t.Helper()
	for _, p := range provs {
		var info node.NodeInfo
		if err := rpcCall(p.API, "tenzro_nodeInfo", nil, &info); err != nil {
			t.Fatal(err)
		}
		ops, machines = append(ops, accountOfHome(t, p.Home)), append(machines, info.MachineID)
	}
	return ops, machines
}

// settledTimes counts, by request digest, the records settled that p
// selects.
func settledTimes(t *testing.T, api string, p chainapi.PaymentsParams) map[string]int {
	t.Helper()
	times := map[string]int{}
	for _, r := range paymentsIn(t, api, p).Records {
		times[r.RequestDigest]++
	}
	return times
}

// settledAll reports whether every digest of want settled.
func settledAll[V any](times map[string]int, want map[string]V) bool {
	for d := range want {
		if times[d] == 0 {
			return false
		}
	}
	return true
}

// payerNamed names a settled record's payer in checkOperatorsRose's log:
// "buyer" for buyer's, else other.
func payerNamed(buyer, other string) func(chainapi.PaymentView) string {
	return func(r chainapi.PaymentView) string {
		if r.Payer == buyer {
			return "buyer"
		}
		return other
	}
}

// checkEscrowFell asserts that payer's escrow with settler (named what)
// fell between the snapshots by exactly sum, the Σ price of the records
// settled from it (named sumWhat).
func checkEscrowFell(t *testing.T, snap0, snap1 chainSnap, settler, what string, sum uint64, sumWhat string) {
	t.Helper()
	if fell := snap0.escrows[settler] - snap1.escrows[settler]; fell != sum {
		t.Errorf("escrow %s fell by %d (%d → %d), want exactly %s %d", what, fell, snap0.escrows[settler], snap1.escrows[settler], sumWhat, sum)
	}
}

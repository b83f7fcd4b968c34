package main

import (
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// accountOfHome is the chain account of the key in a node home.
func accountOfHome(t *testing.T, home string) string {
	t.Helper()
	k, err := consensus.ReadAccountKey(filepath.Join(home, devnet.AccountKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return terms.AccountOf(k.Public().(ed25519.PublicKey)).String()
}

// chainSnap is one height's view of the balances the test accounts for.
type chainSnap struct {
	height   int64
	escrows  map[string]uint64 // payer's escrows by settler
	balances map[string]uint64 // by account
}

// snapshotAt reads payer's escrows and the accounts' balances at the node
// at api, all at one height: it retries until no block committed between
// the first read and the last (every answer names the height it read).
func snapshotAt(t *testing.T, api, payer string, accounts []string) chainSnap {
	t.Helper()
	for try := 0; try < 100; try++ {
		s := chainSnap{escrows: map[string]uint64{}, balances: map[string]uint64{}}
		var first chainapi.AccountView
		if err := rpcCall(api, "tenzro_getAccount", chainapi.AccountParams{Account: payer}, &first); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.height = first.Height
		ok := true
		for _, a := range accounts {
			var v chainapi.AccountView
			if err := rpcCall(api, "tenzro_getAccount", chainapi.AccountParams{Account: a}, &v); err != nil || v.Height != s.height {
				ok = false
				break
			}
			s.balances[a] = v.Balance
		}
		var es struct {
			Escrows []struct {
				Balance uint64 `json:"balance"`
				Settler string `json:"settler"`
			} `json:"escrows"`
			Height int64 `json:"height"`
		}
		if !ok || rpcCall(api, "tenzro_listEscrows", chainapi.AccountParams{Account: payer}, &es) != nil || es.Height != s.height {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, e := range es.Escrows {
			s.escrows[e.Settler] = e.Balance
		}
		var last chainapi.AccountView
		if err := rpcCall(api, "tenzro_getAccount", chainapi.AccountParams{Account: payer}, &last); err != nil || last.Height != s.height {
			continue
		}
		return s
	}
	t.Fatalf("no consistent snapshot of the chain at %s after 100 tries", api)
	return chainSnap{}
}

// paymentsIn lists the records settled at heights from..to for payer or
// to provider (a machine ID), as tenzro_getPayments answers.
func paymentsIn(t *testing.T, api string, p chainapi.PaymentsParams) chainapi.PaymentsView {
	t.Helper()
	var v chainapi.PaymentsView
	var err error
	for try := 0; try < 20; try++ {
		if err = rpcCall(api, "tenzro_getPayments", p, &v); err == nil {
			return v
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("tenzro_getPayments %+v at %s: %v", p, api, err)
	return v
}

// feePool is the account every fee is paid to.
var feePool = ledger.FeePoolAccount.String()

// heightAt is the chain height the node at api has committed (0 if it
// does not answer).
func heightAt(api string) int64 { return devproc.Height(api, 3*time.Second) }

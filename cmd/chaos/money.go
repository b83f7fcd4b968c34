package main

import (
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// joinDeposit is what the join gateway moves into the buyer's own escrow.
const joinDeposit = 50_000_000

// feePool is the account every fee is paid to.
var feePool = ledger.FeePoolAccount.String()

// accountOfHome is the chain account of the key in a node home.
func accountOfHome(home string) (string, error) {
	k, err := consensus.ReadAccountKey(filepath.Join(home, devnet.AccountKeyFile))
	if err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	return terms.AccountOf(k.Public().(ed25519.PublicKey)).String(), nil
}

// ledgerSnap is one height's view of every escrow that pays for calls
// (by payer and settler) and every balance that is credited for them.
type ledgerSnap struct {
	height   int64
	escrows  map[[2]string]uint64 // {payer, settler}
	balances map[string]uint64
	streams  map[string]streamView // the payers' open stream escrows, by ID
}

// streamView is what the money check reads of an open stream escrow.
type streamView struct {
	ID       string `json:"id"`
	Payer    string `json:"payer"`
	Settler  string `json:"settler"`
	Operator string `json:"operator"`
	Rate     uint64 `json:"rate"`
	Deposit  uint64 `json:"deposit"`
	Claimed  uint64 `json:"claimed"`
	Refunded uint64 `json:"refunded"`
	Closed   bool   `json:"closed"`
}

// streamBalance is Σ of what the open streams still hold: deposits that
// left an escrow and were neither claimed nor refunded yet.
func (s ledgerSnap) streamBalance() uint64 {
	var t uint64
	for _, v := range s.streams {
		if v.Claimed+v.Refunded <= v.Deposit {
			t += v.Deposit - v.Claimed - v.Refunded
		}
	}
	return t
}

func (s ledgerSnap) escrowSum() uint64 {
	var t uint64
	for _, v := range s.escrows {
		t += v
	}
	return t
}

type escrowList struct {
	Escrows []struct {
		Balance uint64 `json:"balance"`
		Settler string `json:"settler"`
	} `json:"escrows"`
	Height int64 `json:"height"`
}

// snapshot reads the payers' escrows and the accounts' balances at the
// node at api, all at one height: it retries until every answer names
// the same height.
func snapshot(api string, payers, accounts []string) (ledgerSnap, error) {
	var last error
	for try := 0; try < 200; try++ {
		s, err := snapshotOnce(api, payers, accounts)
		if err == nil {
			return s, nil
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return ledgerSnap{}, fmt.Errorf("chaos: no consistent ledger snapshot at %s: %w", api, last)
}

func snapshotOnce(api string, payers, accounts []string) (ledgerSnap, error) {
	s := ledgerSnap{escrows: map[[2]string]uint64{}, balances: map[string]uint64{}, streams: map[string]streamView{}}
	same := func(h int64) error {
		if s.height == 0 {
			s.height = h
		}
		if h != s.height {
			return fmt.Errorf("a block committed while reading (%d, %d)", s.height, h)
		}
		return nil
	}
	for _, p := range payers {
		var es escrowList
		if err := rpcCall(api, "tenzro_listEscrows", chainapi.AccountParams{Account: p}, &es); err != nil {
			return s, err
		}
		if err := same(es.Height); err != nil {
			return s, err
		}
		for _, e := range es.Escrows {
			s.escrows[[2]string{p, e.Settler}] = e.Balance
		}
		var v struct {
			Height  int64        `json:"height"`
			Streams []streamView `json:"streams"`
		}
		if err := rpcCall(api, "tenzro_getAccount", chainapi.AccountParams{Account: p}, &v); err != nil {
			return s, err
		}
		if err := same(v.Height); err != nil {
			return s, err
		}
		for _, st := range v.Streams {
			s.streams[st.ID] = st
		}
	}
	for _, a := range accounts {
		var v chainapi.AccountView
		if err := rpcCall(api, "tenzro_getAccount", chainapi.AccountParams{Account: a}, &v); err != nil {
			return s, err
		}
		if err := same(v.Height); err != nil {
			return s, err
		}
		s.balances[a] = v.Balance
	}
	return s, nil
}

// payments lists the records settled at heights from..to for payer, as
// the checker's view of the chain holds them (see view_*.go).
func payments(api string, p chainapi.PaymentsParams) ([]chainapi.PaymentView, error) {
	var v chainapi.PaymentsView
	var err error
	for try := 0; try < 20; try++ {
		if err = rpcCall(api, "tenzro_getPayments", p, &v); err == nil {
			return v.Records, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, err
}

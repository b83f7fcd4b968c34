package testnet_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// TestIdleChainKeepsItsAppHash: a 3-validator chain with no transactions
// keeps the genesis app hash at every height, on every validator, and
// makes blocks no faster than one per empty-blocks interval (CometBFT
// needs no block to prove an unchanged app hash). A transfer changes the
// app hash once; the block after it proves it, and the chain idles on
// at the new hash. The chain metadata answers each block's own height
// and time, which the state no longer holds.
func TestIdleChainKeepsItsAppHash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const interval = 400 * time.Millisecond
	buyer := seedKey("buyer")
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{
		Validators: 3, BlockTime: 30 * time.Millisecond, EmptyBlocksInterval: interval,
		Accounts: []ledger.GenesisAccount{{Account: ledgertest.Account(buyer), Balance: 1_000_000}},
	})
	genesis, err := sameAppHash(ctx, net, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Three more blocks take at least two intervals: the first may come at
	// once, each one after it waits out the interval. Load only slows
	// them, so the bound holds on any machine.
	h0, start := net.MaxHeight(), time.Now()
	if err := net.WaitHeight(ctx, h0+3); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*interval {
		t.Fatalf("heights %d to %d took %s, want at least %s: the idle chain does not wait", h0, h0+3, took, 2*interval)
	}
	for h := int64(2); h <= h0+3; h++ {
		if got, err := sameAppHash(ctx, net, h); err != nil || !bytes.Equal(got, genesis) {
			t.Fatalf("idle height %d: app hash %x (%v), want genesis's %x", h, got, err, genesis)
		}
	}
	checkMeta(ctx, t, net)

	s := newSender(net)
	hT := submit(ctx, t, net.Nodes[1], s.Sign(t, buyer, &ledger.Transfer{To: ledgertest.Account(seedKey("bob")), Amount: 7}))[0].Height
	changed, err := sameAppHash(ctx, net, hT)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(changed, genesis) {
		t.Fatalf("the transfer's block %d kept the genesis app hash", hT)
	}
	for h := hT + 1; h <= hT+2; h++ {
		if got, err := sameAppHash(ctx, net, h); err != nil || !bytes.Equal(got, changed) {
			t.Fatalf("height %d after the transfer: app hash %x (%v), want %x", h, got, err, changed)
		}
	}
	checkMeta(ctx, t, net)
}

// checkMeta wants the chain metadata of every node to name a committed
// block's height and that block's header time.
func checkMeta(ctx context.Context, t *testing.T, net *testnet.Net) {
	t.Helper()
	for _, nd := range net.Running() {
		m, err := nd.Meta(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := nd.Client().Block(ctx, &m.Height)
		if err != nil || b.Block == nil {
			t.Fatalf("block %d of the metadata: %v", m.Height, err)
		}
		if m.ChainID != net.ChainID || m.Time != b.Block.Time.Unix() {
			t.Fatalf("metadata %+v, want chain %s and block %d's time %d", m, net.ChainID, m.Height, b.Block.Time.Unix())
		}
	}
}

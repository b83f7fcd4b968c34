package consensus_test

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

var genesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTransferApplies(t *testing.T) {
	alice, ga := signer("alice", 1_000_000)
	bob, _ := signer("bob", 0)
	c := newChain(t, "", genesisTime, testParams(), 1, ga)
	c.mustApply(c.sign(alice, &consensus.Transfer{To: bob.Account(), Amount: 250}))
	if a := c.account(alice.Account()); a.Balance != 999_750 || a.Nonce != 1 {
		t.Fatalf("alice = %+v, want balance 999750 nonce 1", a)
	}
	if b := c.account(bob.Account()); b.Balance != 250 || b.Nonce != 0 {
		t.Fatalf("bob = %+v, want balance 250 nonce 0", b)
	}
}

// TestRejectedTxsChangeNothing runs a block of invalid transactions on one
// chain and an empty block on an identical twin: every tx must fail with
// its code and both chains must end with the same app hash.
func TestRejectedTxsChangeNothing(t *testing.T) {
	alice, ga := signer("alice", 1_000_000)
	rich, gr := signer("rich", math.MaxUint64-10)
	stranger, _ := signer("stranger", 0)
	mk := func() *chain {
		c := newChain(t, "", genesisTime, testParams(), 1, ga, gr)
		c.mustApply(c.sign(alice, &consensus.EscrowFund{Amount: 5000}))
		return c
	}
	c, twin := mk(), mk()
	prov, err := testnet.NewProvider()
	if err != nil {
		t.Fatal(err)
	}
	good := c.sign(alice, &consensus.Transfer{To: rich.Account(), Amount: 1})
	badSig := bytes.Clone(good)
	badSig[len(badSig)-1] ^= 1
	wrongChain, _ := consensus.NewSigner(seedKey("alice", 0), "other-chain").SignTx(1, &consensus.Transfer{To: rich.Account(), Amount: 1})
	cases := []struct {
		name string
		tx   []byte
		code consensus.Code
	}{
		{"bad signature", badSig, consensus.CodeBadSignature},
		{"wrong chain", wrongChain, consensus.CodeBadSignature},
		{"replayed nonce", c.signAt(alice, 0, &consensus.Transfer{To: rich.Account(), Amount: 7}), consensus.CodeStaleNonce},
		{"future nonce", c.signAt(alice, 9, &consensus.Transfer{To: rich.Account(), Amount: 7}), consensus.CodeFutureNonce},
		{"overdraft", c.sign(alice, &consensus.Transfer{To: rich.Account(), Amount: 2_000_000}), consensus.CodeOverdraft},
		{"overflow", c.sign(alice, &consensus.Transfer{To: rich.Account(), Amount: 11}), consensus.CodeOverflow},
		{"unknown account", c.signAt(stranger, 0, &consensus.Transfer{To: rich.Account(), Amount: 1}), consensus.CodeUnknownAccount},
		{"unknown provider", c.sign(alice, &consensus.Settlement{Records: []consensus.PaymentRecord{{
			Payer: alice.Account(), Provider: prov.MachineID, Price: 10}}}), consensus.CodeUnknownProvider},
		{"zero amount", c.sign(alice, &consensus.Transfer{To: rich.Account()}), consensus.CodeMalformed},
		{"garbage", []byte{0xa2, 0x01, 0x40}, consensus.CodeMalformed},
		{"escrow overdraft", c.sign(alice, &consensus.EscrowWithdraw{Amount: 5001}), consensus.CodeOverdraft},
	}
	var txs [][]byte
	for _, tc := range cases {
		txs = append(txs, tc.tx)
	}
	res := c.block(txs...)
	for i, tc := range cases {
		if got := consensus.Code(res.TxResults[i].Code); got != tc.code {
			t.Errorf("%s: code %v (%s), want %v", tc.name, got, res.TxResults[i].Log, tc.code)
		}
		if res.TxResults[i].Log == "" {
			t.Errorf("%s: empty log", tc.name)
		}
	}
	twin.block()
	if !bytes.Equal(c.app.AppHash(), twin.app.AppHash()) {
		t.Fatalf("app hash after rejected txs %x differs from empty block %x", c.app.AppHash(), twin.app.AppHash())
	}
	// The same txs through CheckTx get the same codes.
	for i, tc := range cases[:6] {
		r, err := c.app.CheckTx(context.Background(), &abci.CheckTxRequest{Tx: txs[i]})
		if err != nil || consensus.Code(r.Code) != tc.code {
			t.Errorf("CheckTx %s: code %d %v, want %v", tc.name, r.GetCode(), err, tc.code)
		}
	}
}

func TestCheckTxTracksPendingNonces(t *testing.T) {
	alice, ga := signer("alice", 100)
	bob, _ := signer("bob", 0)
	c := newChain(t, "", genesisTime, testParams(), 1, ga)
	check := func(tx []byte) consensus.Code {
		r, err := c.app.CheckTx(context.Background(), &abci.CheckTxRequest{Tx: tx})
		if err != nil {
			t.Fatal(err)
		}
		return consensus.Code(r.Code)
	}
	t0 := c.signAt(alice, 0, &consensus.Transfer{To: bob.Account(), Amount: 60})
	t1 := c.signAt(alice, 1, &consensus.Transfer{To: bob.Account(), Amount: 30})
	t2 := c.signAt(alice, 2, &consensus.Transfer{To: bob.Account(), Amount: 30})
	if got := []consensus.Code{check(t0), check(t1), check(t2)}; got[0] != 0 || got[1] != 0 || got[2] != consensus.CodeOverdraft {
		t.Fatalf("CheckTx codes %v, want [0 0 overdraft]", got)
	}
	c.mustApply(t0)
	// After the commit the mempool state restarts from committed state.
	if got := check(t0); got != consensus.CodeStaleNonce {
		t.Fatalf("recheck of committed tx: %v, want stale nonce", got)
	}
	if got := check(t1); got != 0 {
		t.Fatalf("recheck of pending tx: %v, want ok", got)
	}
}

func TestRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	alice, ga := signer("alice", 1000)
	bob, _ := signer("bob", 0)
	c := newChain(t, dir, genesisTime, testParams(), 1, ga)
	for i := range 3 {
		c.mustApply(c.signAt(alice, uint64(i), &consensus.Transfer{To: bob.Account(), Amount: 10}))
	}
	height, hash := c.app.Height(), c.app.AppHash()
	if err := c.app.Close(); err != nil {
		t.Fatal(err)
	}
	app, err := consensus.NewApp(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := app.Info(context.Background(), &abci.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.LastBlockHeight != height || !bytes.Equal(info.LastBlockAppHash, hash) {
		t.Fatalf("Info after restart: height %d hash %x, want %d %x", info.LastBlockHeight, info.LastBlockAppHash, height, hash)
	}
	c.app = app
	t.Cleanup(func() { _ = app.Close() })
	if b := c.account(bob.Account()); b.Balance != 30 {
		t.Fatalf("bob after restart: %+v, want 30", b)
	}
	c.mustApply(c.sign(alice, &consensus.Transfer{To: bob.Account(), Amount: 1}))
	if b := c.account(bob.Account()); b.Balance != 31 || c.app.Height() != height+1 {
		t.Fatalf("after next block: bob %+v height %d", b, c.app.Height())
	}
	if old, err := c.app.AppHashAt(height); err != nil || !bytes.Equal(old, hash) {
		t.Fatalf("AppHashAt(%d) = %x, %v; want %x", height, old, err, hash)
	}
}

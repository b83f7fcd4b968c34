package ledger_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

func TestTransferApplies(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 1_000_000)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	c.mustApply(c.sign(alice, &ledger.Transfer{To: bob.Account(), Amount: 250}))
	if a := c.account(alice.Account()); a.Balance != 999_750 || a.Nonce != 1 {
		t.Fatalf("alice = %+v, want balance 999750 nonce 1", a)
	}
	if b := c.account(bob.Account()); b.Balance != 250 || b.Nonce != 0 {
		t.Fatalf("bob = %+v, want balance 250 nonce 0", b)
	}
}

// TestRejectedTxsChangeNothing runs a block of invalid transactions on one
// chain and an empty block on an identical twin: every tx must fail with
// TestRejectedTxsChangeNothing submits transactions refused before they
// run (signature, nonce, decoding, unknown signer) in a block on one chain
// and an empty block on an identical twin: every tx must fail with its
// code and both chains must end with the same app hash. Transactions that
// fail while running in the block consume their nonce and pay FeePerTx,
// and change nothing else; Check refuses them without consuming anything,
// and refuses a signer that cannot pay FeePerTx.
func TestRejectedTxsChangeNothing(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 1_000_000)
	rich, gr := ledgertest.Signer(testChain, "rich", math.MaxUint64-10)
	stranger, _ := ledgertest.Signer(testChain, "stranger", 0)
	params := ledgertest.Params()
	params.FeePerTx = 5
	mk := func() *chain {
		c := newChain(t, "", genesisTime, params, 1, ga, gr)
		c.mustApply(c.sign(alice, &ledger.EscrowFund{Amount: 5000}))
		return c
	}
	c, twin := mk(), mk()
	good := c.sign(alice, &ledger.Transfer{To: rich.Account(), Amount: 1})
	badSig := bytes.Clone(good)
	badSig[len(badSig)-1] ^= 1
	wrongChain, _ := ledger.NewSigner(ledgertest.SeedKey("alice", 0), "other-chain").SignTx(1, &ledger.Transfer{To: rich.Account(), Amount: 1})
	cases := []struct {
		name string
		tx   []byte
		code ledger.Code
	}{
		{"bad signature", badSig, ledger.CodeBadSignature},
		{"wrong chain", wrongChain, ledger.CodeBadSignature},
		{"replayed nonce", c.SignAt(alice, 0, &ledger.Transfer{To: rich.Account(), Amount: 7}), ledger.CodeStaleNonce},
		{"future nonce", c.SignAt(alice, 9, &ledger.Transfer{To: rich.Account(), Amount: 7}), ledger.CodeFutureNonce},
		{"unknown account", c.SignAt(stranger, 0, &ledger.Transfer{To: rich.Account(), Amount: 1}), ledger.CodeUnknownAccount},
		{"zero amount", c.sign(alice, &ledger.Transfer{To: rich.Account()}), ledger.CodeMalformed},
		{"garbage", []byte{0xa2, 0x01, 0x40}, ledger.CodeMalformed},
	}
	var txs [][]byte
	for _, tc := range cases {
		txs = append(txs, tc.tx)
	}
	res := c.block(txs...)
	for i, tc := range cases {
		if got := res.Txs[i].Code; got != tc.code {
			t.Errorf("%s: code %v (%s), want %v", tc.name, got, res.Txs[i].Log, tc.code)
		}
		if res.Txs[i].Log == "" {
			t.Errorf("%s: empty log", tc.name)
		}
	}
	twin.block()
	if !bytes.Equal(c.l.AppHash(), twin.l.AppHash()) {
		t.Fatalf("app hash after rejected txs %x differs from empty block %x", c.l.AppHash(), twin.l.AppHash())
	}
	// The same txs through Check get the same codes.
	for i, tc := range cases[:5] {
		if got := ledger.CodeOf(c.l.Check(txs[i])); got != tc.code {
			t.Errorf("Check %s: code %v, want %v", tc.name, got, tc.code)
		}
	}

	before, richBefore, escrowBefore := c.account(alice.Account()), c.account(rich.Account()), c.escrow(alice.Account(), alice.Account())
	n := before.Nonce
	failing := []struct {
		name string
		tx   []byte
		code ledger.Code
	}{
		{"overdraft", c.SignAt(alice, n, &ledger.Transfer{To: rich.Account(), Amount: 2_000_000}), ledger.CodeOverdraft},
		{"overflow", c.SignAt(alice, n+1, &ledger.Transfer{To: rich.Account(), Amount: 11}), ledger.CodeOverflow},
		{"escrow overdraft", c.SignAt(alice, n+2, &ledger.EscrowWithdraw{Amount: 5001}), ledger.CodeOverdraft},
	}
	// Check refuses the first and consumes nothing: the second is ahead.
	if got := ledger.CodeOf(c.l.Check(failing[0].tx)); got != failing[0].code {
		t.Errorf("Check %s: code %v, want %v", failing[0].name, got, failing[0].code)
	}
	if got := ledger.CodeOf(c.l.Check(failing[1].tx)); got != ledger.CodeFutureNonce {
		t.Errorf("Check after a refused tx: code %v, want %v", got, ledger.CodeFutureNonce)
	}
	res = c.block(failing[0].tx, failing[1].tx, failing[2].tx)
	for i, tc := range failing {
		if got := res.Txs[i].Code; got != tc.code {
			t.Errorf("%s in a block: code %v (%s), want %v", tc.name, got, res.Txs[i].Log, tc.code)
		}
	}
	after := c.account(alice.Account())
	if after.Nonce != n+3 || after.Balance != before.Balance-3*5 {
		t.Fatalf("after 3 failed txs alice is %+v, want nonce %d and balance %d", after, n+3, before.Balance-15)
	}
	if c.account(rich.Account()) != richBefore || c.escrow(alice.Account(), alice.Account()) != escrowBefore {
		t.Fatal("failed txs changed more than nonce and fee")
	}
	if pool := c.account(ledger.FeePoolAccount); pool.Balance != 4*5 {
		t.Fatalf("fee pool %d, want 20 (1 applied and 3 failed txs)", pool.Balance)
	}
	poor, gp := ledgertest.Signer(testChain, "poor", 4)
	c2 := newChain(t, "", genesisTime, params, 1, gp)
	if got := ledger.CodeOf(c2.l.Check(c2.sign(poor, &ledger.Transfer{To: rich.Account(), Amount: 1}))); got != ledger.CodeFeeTooLow {
		t.Fatalf("Check of a tx whose signer cannot pay the fee: %v, want %v", got, ledger.CodeFeeTooLow)
	}
}

func TestCheckTxTracksPendingNonces(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 100)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	check := func(tx []byte) ledger.Code { return ledger.CodeOf(c.l.Check(tx)) }
	t0 := c.SignAt(alice, 0, &ledger.Transfer{To: bob.Account(), Amount: 60})
	t1 := c.SignAt(alice, 1, &ledger.Transfer{To: bob.Account(), Amount: 30})
	t2 := c.SignAt(alice, 2, &ledger.Transfer{To: bob.Account(), Amount: 30})
	if got := []ledger.Code{check(t0), check(t1), check(t2)}; got[0] != 0 || got[1] != 0 || got[2] != ledger.CodeOverdraft {
		t.Fatalf("CheckTx codes %v, want [0 0 overdraft]", got)
	}
	c.mustApply(t0)
	// After the commit the mempool state restarts from committed state.
	if got := check(t0); got != ledger.CodeStaleNonce {
		t.Fatalf("recheck of committed tx: %v, want stale nonce", got)
	}
	if got := check(t1); got != 0 {
		t.Fatalf("recheck of pending tx: %v, want ok", got)
	}
}

func TestRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	alice, ga := ledgertest.Signer(testChain, "alice", 1000)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, dir, genesisTime, ledgertest.Params(), 1, ga)
	for i := range 3 {
		c.mustApply(c.SignAt(alice, uint64(i), &ledger.Transfer{To: bob.Account(), Amount: 10}))
	}
	height, hash := c.l.Height(), c.l.AppHash()
	if err := c.l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if h, hh := l.Head(); h != height || !bytes.Equal(hh, hash) || l.ChainID() != testChain {
		t.Fatalf("after restart: height %d hash %x chain %q, want %d %x %q", h, hh, l.ChainID(), height, hash, testChain)
	}
	c.l = l
	if b := c.account(bob.Account()); b.Balance != 30 {
		t.Fatalf("bob after restart: %+v, want 30", b)
	}
	c.mustApply(c.sign(alice, &ledger.Transfer{To: bob.Account(), Amount: 1}))
	if b := c.account(bob.Account()); b.Balance != 31 || c.l.Height() != height+1 {
		t.Fatalf("after next block: bob %+v height %d", b, c.l.Height())
	}
	if old, err := c.l.AppHashAt(height); err != nil || !bytes.Equal(old, hash) {
		t.Fatalf("AppHashAt(%d) = %x, %v; want %x", height, old, err, hash)
	}
}

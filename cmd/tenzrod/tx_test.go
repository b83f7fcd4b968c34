package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// txNet is one validator node made the way an operator makes one (init,
// genesis, run) with a funded buyer key, serving its API in-process.
type txNet struct {
	node     *node.Node
	api      string
	buyerKey string
	buyer    terms.AccountID
	genesis  string // the chain's genesis.json
}

// txBuyerFunds is the buyer's balance at genesis: enough for two serving
// bonds of the default parameters.
const txBuyerFunds = 5_000_000_000

func startTxNet(t *testing.T) *txNet {
	t.Helper()
	dir := t.TempDir()
	n := &txNet{buyerKey: filepath.Join(dir, "buyer.key"), genesis: filepath.Join(dir, "net", "genesis.json")}
	priv, err := consensus.NewAccountKey(n.buyerKey)
	if err != nil {
		t.Fatal(err)
	}
	n.buyer = terms.AccountOf(priv.Public().(ed25519.PublicKey))
	home := filepath.Join(dir, "validator")
	if out, err := runCLI(t, "init", "--home", home, "--role", "validator", "--key-backend", "software",
		"--api-listen", "127.0.0.1:0", "--p2p-listen", nodetest.LoopbackListen()[0]); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cfg, err := node.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chain.P2PListen = nodetest.FreeTCP(t)
	if err := node.WriteConfig(cfg, true); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "genesis", "--chain-id", "tenzro-tx-test", "--dir", filepath.Join(dir, "net"),
		"--validator", home, "--fund", fmt.Sprintf("%s=%d", n.buyer, txBuyerFunds), "--block-time", "100ms",
		// Blocks every 100 ms, idle or not: the tests wait for block time
		// to pass (stream accrual), which an idle chain's 5 s pause slows.
		"--empty-blocks-interval", "0s"); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	if cfg, err = node.Load(home); err != nil {
		t.Fatal(err)
	}
	n.node = startInProcess(t, "validator", cfg)
	n.api = n.node.APIURL()
	nodetest.Eventually(t, 20*time.Second, "first block", func() bool { return n.node.Info().Height > 0 })
	return n
}

// balance is the account's balance as the node's API reports it.
func (n *txNet) balance(t *testing.T, id terms.AccountID) uint64 {
	t.Helper()
	var v chainapi.AccountView
	if err := rpcCall(n.api, "tenzro_getAccount", chainapi.AccountParams{Account: id.String()}, &v); err != nil {
		t.Fatal(err)
	}
	return v.Balance
}

// escrow is the account's own spend escrow (settler: itself) in the
// node's chain state.
func (n *txNet) escrow(t *testing.T, id terms.AccountID) ledger.Escrow {
	t.Helper()
	e, _, err := n.node.Chain().Escrow(context.Background(), id, id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newAccount writes a fresh account key with `keys account new`.
func newAccount(t *testing.T) (string, terms.AccountID) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "account.key")
	out, err := runCLI(t, "keys", "account", "new", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := terms.ParseAccountID(strings.Fields(out)[1])
	if err != nil {
		t.Fatal(err)
	}
	return path, id
}

// mustTx runs a `tx` command that must commit with code 0.
func mustTx(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runCLI(t, append([]string{"tx"}, args...)...)
	if err != nil {
		t.Fatalf("tx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if !strings.Contains(out, "code       0 (ok)") || !strings.Contains(out, "height ") {
		t.Fatalf("tx %s printed no committed result:\n%s", strings.Join(args, " "), out)
	}
	t.Logf("tx %s:\n%s", args[0], out)
	return out
}

// TestTxMoney moves money with the CLI on a real chain: a transfer moves
// exactly its amount, escrow fund and withdraw move it in and out of the
// escrow, an overdraft exits non-zero naming its code, and a provider home
// is registered, unbonded and withdrawn by a freshly funded operator key.
func TestTxMoney(t *testing.T) {
	n := startTxNet(t)
	opKey, op := newAccount(t)

	const amount = 1_500_000_000
	buyer0 := n.balance(t, n.buyer)
	out := mustTx(t, "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "1_500_000_000")
	if !strings.Contains(out, "transfer 1500000000 micro-units to "+op.String()) {
		t.Errorf("transfer output does not say what it did:\n%s", out)
	}
	if got := n.balance(t, op); got != amount {
		t.Fatalf("receiver balance %d, want %d", got, amount)
	}
	if got := n.balance(t, n.buyer); got != buyer0-amount {
		t.Fatalf("sender balance %d, want %d", got, buyer0-amount)
	}
	if got := printedField(t, out, "balance"); got != fmt.Sprint(buyer0-amount) {
		t.Errorf("printed balance %s, want %d", got, buyer0-amount)
	}

	t.Run("pending nonce", func(t *testing.T) {
		// A transaction of the same account still in the mempool holds the
		// committed nonce; the second command signs again once it commits.
		b0 := n.balance(t, op)
		out, err := runCLI(t, "tx", "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "3", "--wait", "0")
		if err != nil || !strings.Contains(out, "accepted into the mempool") {
			t.Fatalf("--wait 0: %v\n%s", err, out)
		}
		mustTx(t, "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "4")
		if got := n.balance(t, op); got != b0+7 {
			t.Fatalf("receiver balance %d after both transfers, want %d", got, b0+7)
		}
		if _, err := runCLI(t, "tx", "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "4", "--nonce", "0"); err == nil ||
			!strings.Contains(err.Error(), "code 3 (stale nonce)") {
			t.Fatalf("an explicit used --nonce: %v", err)
		}
		if _, err := runCLI(t, "tx", "transfer", "--api", n.api, "--key", opKey, "--to", n.buyer.String(), "--amount", "7"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("escrow", func(t *testing.T) {
		b0 := n.balance(t, n.buyer)
		mustTx(t, "escrow", "fund", "--api", n.api, "--key", n.buyerKey, "--amount", "700000")
		if e, b := n.escrow(t, n.buyer), n.balance(t, n.buyer); e.Balance != 700_000 || b != b0-700_000 {
			t.Fatalf("after fund: escrow %+v balance %d, want 700000 and %d", e, b, b0-700_000)
		}
		// A withdrawal waits out the chain's delay: pending, not yet paid.
		mustTx(t, "escrow", "withdraw", "--api", n.api, "--key", n.buyerKey, "--amount", "250000")
		if e, b := n.escrow(t, n.buyer), n.balance(t, n.buyer); e.Balance != 700_000 || e.Pending != 250_000 || e.Available() != 450_000 || b != b0-700_000 {
			t.Fatalf("after withdraw: escrow %+v balance %d, want 250000 pending of 700000 and %d", e, b, b0-700_000)
		}
		out, err := runCLI(t, "tx", "escrow", "claim", "--api", n.api, "--key", n.buyerKey)
		if err == nil || !strings.Contains(err.Error(), "code 53 (withdrawal locked): the withdrawal of 250000 micro-units is pending until height") {
			t.Fatalf("claiming before the unlock: %v\n%s", err, out)
		}
		out, err = runCLI(t, "tx", "escrow", "withdraw", "--api", n.api, "--key", n.buyerKey, "--amount", "450001")
		if err == nil || !strings.Contains(err.Error(), "(overdraft)") {
			t.Fatalf("withdrawing more than the escrow: %v\n%s", err, out)
		}
	})

	t.Run("overdraft", func(t *testing.T) {
		out, err := runCLI(t, "tx", "transfer", "--api", n.api, "--key", opKey, "--to", n.buyer.String(), "--amount", "1500000001")
		if err == nil || !strings.Contains(err.Error(), "code 5 (overdraft)") || !strings.Contains(out, "overdraft") {
			t.Fatalf("transfer beyond the balance: err %v\n%s", err, out)
		}
		t.Logf("overdraft:\n%s\nerror: %v", out, err)
		if got := n.balance(t, op); got != amount {
			t.Fatalf("a refused transfer changed the balance to %d", got)
		}
	})

	t.Run("register", func(t *testing.T) { testTxRegister(t, n, opKey, op) })
}

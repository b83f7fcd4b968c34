package ledger_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const testChain = ledgertest.Chain

var genesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// chain drives a Ledger directly, the way a consensus engine does.
type chain struct {
	ledgertest.Driver
	l *ledger.Ledger
}

// newChain opens a ledger in dir ("" = memory) with nVals validators and
// the given funded accounts.
func newChain(t testing.TB, dir string, genesis time.Time, params ledger.Params, nVals int, accts ...ledger.GenesisAccount) *chain {
	t.Helper()
	l, err := ledger.Open(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	d, g := ledgertest.NewDriver(t, genesis, params, nVals, accts...)
	if _, _, err := l.InitChain(testChain, genesis, 1, g); err != nil {
		t.Fatal(err)
	}
	return &chain{Driver: d, l: l}
}

// block finalizes and commits a block one second after the previous one.
func (c *chain) block(txs ...[]byte) ledger.BlockResult {
	c.T.Helper()
	res, err := c.l.Finalize(c.l.Height()+1, c.Tick(), txs)
	if err != nil {
		c.T.Fatal(err)
	}
	if err := c.l.Commit(); err != nil {
		c.T.Fatal(err)
	}
	return res
}

// mustApply commits txs in one block and fails unless each applied.
func (c *chain) mustApply(txs ...[]byte) ledger.BlockResult {
	c.T.Helper()
	res := c.block(txs...)
	for i, r := range res.Txs {
		if r.Code != ledger.CodeOK {
			c.T.Fatalf("tx %d: code %v: %s", i, r.Code, r.Log)
		}
	}
	return res
}

// wantCodes commits txs in one block and checks each one's code.
//
// Each tx is tried alone in a block on the current state that is then
// dropped (a failing tx in a block consumes its nonce, so txs sharing a
// nonce could not each be tried in one block), then an empty block is
// committed so time moves as if they had been in it.
func wantCodes(t *testing.T, c *chain, txs [][]byte, want ...ledger.Code) {
	t.Helper()
	for i, w := range want {
		res, err := c.l.Finalize(c.l.Height()+1, c.Now.Add(time.Second), [][]byte{txs[i]})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Txs[0].Code; got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.Txs[0].Log, w)
		}
	}
	c.block()
}

// get decodes the committed value at key into v; false when absent.
func (c *chain) get(key []byte, v any) bool {
	c.T.Helper()
	var ok bool
	err := c.l.View(0, func(t *trie.Trie, _ int64) error {
		var err error
		ok, err = ledger.Load(ledger.NewTrieKV(t), key, v)
		return err
	})
	if err != nil {
		c.T.Fatal(err)
	}
	return ok
}

// raw returns the committed bytes at key (nil when absent).
func (c *chain) raw(key []byte) []byte {
	c.T.Helper()
	var v []byte
	err := c.l.View(0, func(t *trie.Trie, _ int64) error {
		var err error
		v, err = ledger.NewTrieKV(t).Get(key)
		return err
	})
	if err != nil {
		c.T.Fatal(err)
	}
	return v
}

func (c *chain) account(id terms.AccountID) ledger.Account {
	c.T.Helper()
	var a ledger.Account
	c.get(ledger.KeyAccount(id), &a)
	return a
}

func (c *chain) params() ledger.Params {
	c.T.Helper()
	var p ledger.Params
	c.get(ledger.KeyParams(), &p)
	return p
}

func (c *chain) escrow(payer, settler terms.AccountID) ledger.Escrow {
	c.T.Helper()
	var e ledger.Escrow
	c.get(ledger.KeyEscrow(payer, settler), &e)
	return e
}

// report decodes the SettleReport of an applied settlement's outcome.
func report(t testing.TB, o ledger.TxOutcome) ledger.SettleReport {
	t.Helper()
	if o.Code != ledger.CodeOK {
		t.Fatalf("settlement refused: %v (%s)", o.Code, o.Log)
	}
	var r ledger.SettleReport
	if err := cborx.UnmarshalCanonical(o.Data, ledger.MaxTxBytes, &r); err != nil {
		t.Fatalf("settle report: %v", err)
	}
	return r
}

// wantSkipped checks that a settlement applied with the skips want (record
// index -> code) and nothing else skipped.
func wantSkipped(t testing.TB, o ledger.TxOutcome, settled int, want map[int]ledger.Code) ledger.SettleReport {
	t.Helper()
	r := report(t, o)
	if int(r.Settled) != settled || len(r.Skipped) != len(want) {
		t.Fatalf("report %s (%+v), want %d settled and skips %v", r.String(), r.Skipped, settled, want)
	}
	for _, s := range r.Skipped {
		if w, ok := want[int(s.Index)]; !ok || w != s.Code {
			t.Errorf("record %d skipped with %v (%s), want %v", s.Index, s.Code, s.Reason, want[int(s.Index)])
		}
	}
	return r
}

// sign signs payload with s at the account's next nonce.
func (c *chain) sign(s *ledger.Signer, payload any) []byte {
	c.T.Helper()
	return c.SignAt(s, c.account(s.Account()).Nonce, payload)
}

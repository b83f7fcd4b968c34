package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// TestPrepareKeepsChargedFailures: a proposal keeps a transaction that
// pays its fee and nonce and then fails (a transfer beyond the balance),
// so the signer's next transaction stays valid behind it, and the block
// records it as failed with its nonce used; it drops what cannot pay its
// nonce (a replay, a future nonce) and what does not decode.
func TestPrepareKeepsChargedFailures(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 1_000_000)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	failing := c.SignAt(alice, 0, &ledger.Transfer{To: bob.Account(), Amount: 2_000_000})
	next := c.SignAt(alice, 1, &ledger.Transfer{To: bob.Account(), Amount: 10})
	replay := c.SignAt(alice, 0, &ledger.Transfer{To: bob.Account(), Amount: 5})
	future := c.SignAt(alice, 9, &ledger.Transfer{To: bob.Account(), Amount: 5})
	garbage := []byte{0xa2, 0x01, 0x40}
	got, err := c.l.Prepare(c.l.Height()+1, c.Now.Add(time.Second), [][]byte{failing, next, replay, future, garbage}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0], failing) || !bytes.Equal(got[1], next) {
		t.Fatalf("proposal kept %d transactions, want the failing transfer and the one after it", len(got))
	}
	res := c.block(got...)
	if res.Txs[0].Code != ledger.CodeOverdraft || res.Txs[1].Code != ledger.CodeOK {
		t.Fatalf("block codes %v (%s), %v", res.Txs[0].Code, res.Txs[0].Log, res.Txs[1].Code)
	}
	if a := c.account(alice.Account()); a.Nonce != 2 {
		t.Fatalf("alice's nonce %d, want 2 (the failed transfer used one)", a.Nonce)
	}
}

package consensus_test

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestSubmitter on a one-validator chain: concurrent submissions from one
// submitter all commit in nonce order; a rejected one returns its code and
// uses no nonce; a second submitter on the same key (another process) and
// the first one keep working after each other's transactions.
func TestSubmitter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key, bob := ledgertest.SeedKey("submitter", 0), ledgertest.SeedKey("bob", 0)
	acct := terms.AccountOf(key.Public().(ed25519.PublicKey))
	to := terms.AccountOf(bob.Public().(ed25519.PublicKey))
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{Validators: 1, BlockTime: 50 * time.Millisecond,
		Accounts: []ledger.GenesisAccount{{Account: acct, Balance: 1000}}})
	node := net.Nodes[0]
	if _, err := consensus.NewSubmitter(node, key[:10], nil); err == nil {
		t.Fatal("submitter accepted a truncated key")
	}
	sub, err := consensus.NewSubmitter(node, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Account() != acct {
		t.Fatalf("account %s, want %s", sub.Account(), acct)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sub.Submit(ctx, &ledger.Transfer{To: to, Amount: 10})
			if err == nil && (res.Code != ledger.CodeOK || res.Height == 0) {
				t.Errorf("result %+v", res)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sub.Submit(ctx, &ledger.Transfer{To: to, Amount: 5000}); ledger.CodeOf(err) != ledger.CodeOverdraft {
		t.Fatalf("overdraft: %v, want code overdraft", err)
	}
	other, err := consensus.NewSubmitter(node, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*consensus.Submitter{other, sub, other} {
		if _, err := s.Submit(ctx, &ledger.Transfer{To: to, Amount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	a, _, err := node.Account(ctx, acct)
	if err != nil || a.Nonce != 7 || a.Balance != 1000-40-3 {
		t.Fatalf("account %+v (%v), want nonce 7 and balance %d", a, err, 1000-40-3)
	}
}

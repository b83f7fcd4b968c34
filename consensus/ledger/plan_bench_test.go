package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// BenchmarkPlanOpen is one all-local plan of 4 legs opened (and so
// committed) through Exec on a map state: the state machine's cost of a
// split payment, without the trie or signatures.
func BenchmarkPlanOpen(b *testing.B) {
	buyer, _ := ledgertest.Signer(testChain, "plan-buyer", 0)
	me := buyer.Account()
	st := memKV{}
	for key, v := range map[string]any{
		string(ledger.KeyMeta()):         ledger.ChainMeta{ChainID: testChain, Height: 1},
		string(ledger.KeyParams()):       ledgertest.Params(),
		string(ledger.KeyAccount(me)):    ledger.Account{Balance: 1},
		string(ledger.KeyEscrow(me, me)): ledger.Escrow{Balance: 1 << 62, Settler: me},
	} {
		if err := ledger.Save(st, []byte(key), v); err != nil {
			b.Fatal(err)
		}
	}
	legs := []ledger.PlanLeg{{Payee: terms.AccountID{1}, BPS: 4000}, {Payee: terms.AccountID{2}, BPS: 3000},
		{Payee: terms.AccountID{3}, BPS: 2000}, {Payee: terms.AccountID{4}, BPS: 1000}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tx := &ledger.Tx{Body: ledger.TxBody{Signer: me, Nonce: uint64(i)}, Payload: &ledger.PlanOpen{Legs: legs, Total: 1_000_003}}
		if _, err := ledger.Exec(st, ledger.Block{Height: 2}, tx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDrawCommittee draws a committee of 5 from 100 validators.
func BenchmarkDrawCommittee(b *testing.B) {
	powers := make([]int64, 100)
	for i := range powers {
		powers[i] = int64(1 + i)
	}
	cs := candidates(powers...)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if got := ledger.DrawCommittee(seedOf(i), 1, cs, 5); len(got) != 5 {
			b.Fatal(len(got))
		}
	}
}

package ledger_test

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// BenchmarkStreamLedger measures the application alone (no network), per
// op: a block of perBlock stream opens from the buyer's own escrow, a block
// of their claims by the operator an hour (and an empty block) later and a block of their stops,
// each through Check, Finalize and Commit on in-memory state.
func BenchmarkStreamLedger(b *testing.B) {
	const perBlock = 100
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1<<62)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(b, "", genesisTime, ledgertest.Params(), 1, gb, gop)
	m := newMachine(b)
	c.mustApply(c.sign(op, m.register(b, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1 << 61}))
	apply := func(txs [][]byte) {
		for _, tx := range txs {
			if err := c.l.Check(tx); err != nil {
				b.Fatalf("check: %v", err)
			}
		}
		c.mustApply(txs...)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer() // signing is the clients' work, not the chain's
		bn, on := c.account(buyer.Account()).Nonce, c.account(op.Account()).Nonce
		opens, claims, stops := make([][]byte, perBlock), make([][]byte, perBlock), make([][]byte, perBlock)
		for i := range perBlock {
			n := bn + uint64(i)
			id := ledger.StreamID(buyer.Account(), n, buyer.Account(), buyer.Account(), m.machineID())
			opens[i] = c.SignAt(buyer, n, &ledger.StreamOpen{Payee: m.machineID(), Rate: 3600, Deposit: 1 << 20})
			claims[i] = c.SignAt(op, on+uint64(i), &ledger.StreamClaim{ID: id})
			stops[i] = c.SignAt(buyer, n+perBlock, &ledger.StreamStop{ID: id})
		}
		b.StartTimer()
		apply(opens)
		c.Now = c.Now.Add(time.Hour)
		c.block() // Check runs at the last block's time: let the hour pass there too
		apply(claims)
		apply(stops)
	}
	b.ReportMetric(float64(3*perBlock*b.N)/b.Elapsed().Seconds(), "txs/s")
}

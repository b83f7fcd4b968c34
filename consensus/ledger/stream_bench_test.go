package ledger_test

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// BenchmarkStreamLedger measures the application alone (no network), per
// op: a block of perBlock stream opens from the buyer's own escrow, a block
// of their claims by the operator an hour (and an empty block) later and a block of their stops,
// each through Check, Finalize and Commit on in-memory state.
func BenchmarkStreamLedger(b *testing.B) {
	const perBlock = 100
	c, m, buyer, op := benchMarket(b)
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
		c.checkApply(opens...)
		c.Now = c.Now.Add(time.Hour)
		c.block() // Check runs at the last block's time: let the hour pass there too
		c.checkApply(claims...)
		c.checkApply(stops...)
	}
	b.ReportMetric(float64(3*perBlock*b.N)/b.Elapsed().Seconds(), "txs/s")
}

package ledger_test

import (
	"testing"
)

// BenchmarkSettleLedger measures the application alone (no network): per op,
// one settlement transaction of perTx records goes through Check, then
// Finalize and Commit, on in-memory state. Every record carries its own
// receipt envelope from the provider's machine (a receipt pays for one
// call: the chain settles a record only with the receipt of its own
// request), verified by the chain (one session certificate, verified once
// per transaction; each receipt's and record's signature verified once,
// in Check, and found in the signature cache by Finalize). The two cases
// differ in batch size.
func BenchmarkSettleLedger(b *testing.B) {
	for _, tc := range []struct {
		name  string
		perTx int
	}{{"batch-150", 150}, {"receipts", 100}} {
		b.Run(tc.name, func(b *testing.B) {
			c, m, buyer, _ := benchMarket(b)
			txs := settlementTxs(b, c, m, buyer, b.N, tc.perTx)
			b.ResetTimer()
			for _, tx := range txs {
				c.checkApply(tx)
			}
			b.ReportMetric(float64(b.N*tc.perTx)/b.Elapsed().Seconds(), "records/s")
			b.StopTimer()
			if e := c.escrow(buyer.Account(), buyer.Account()); e.Balance != 1<<61-uint64(3*b.N*tc.perTx) {
				b.Fatalf("escrow %d: not every record settled", e.Balance)
			}
		})
	}
}

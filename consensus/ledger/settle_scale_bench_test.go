package ledger_test

import (
	"testing"
)

// BenchmarkSettleRecordCost grounds docs/SCALE.md's settlement figures:
// per record of a full settlement transaction (MaxRecordsPerTx-sized
// batches are split by the collector to fit MaxTxBytes), the bytes it adds
// to a block and the validator's time to check and apply it, with every
// record carrying its own receipt (the realistic case: one call, one
// receipt) against one provider's session certificate.
func BenchmarkSettleRecordCost(b *testing.B) {
	const perTx = 100
	c, m, buyer, _ := benchMarket(b)
	txs := settlementTxs(b, c, m, buyer, b.N, perTx)
	var size int
	for _, tx := range txs {
		size += len(tx)
	}
	b.ResetTimer()
	for _, tx := range txs {
		c.checkApply(tx)
	}
	records := float64(b.N * perTx)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
	b.ReportMetric(float64(size)/records, "bytes/record")
}

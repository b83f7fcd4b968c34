package ledger_test

import (
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// BenchmarkSettleRecordCost grounds docs/SCALE.md's settlement figures:
// per record of a full settlement transaction (MaxRecordsPerTx-sized
// batches are split by the collector to fit MaxTxBytes), the bytes it adds
// to a block and the validator's time to check and apply it, with every
// record carrying its own receipt (the realistic case: one call, one
// receipt) against one provider's session certificate.
func BenchmarkSettleRecordCost(b *testing.B) {
	const perTx = 100
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1<<62)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(b, "", genesisTime, ledgertest.Params(), 1, gb, gop)
	m := newMachine(b)
	c.mustApply(c.sign(op, m.register(b, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1 << 61}))
	txs := make([][]byte, b.N)
	nonce := c.account(buyer.Account()).Nonce
	var size int
	for i := range txs {
		recs := make([]receipt.PaymentRecord, perTx)
		for j := range recs {
			env, hash, d := m.paidReceipt(b, fmt.Sprint("answer ", i, " ", j), buyer.Account(), buyer.Account(), 3)
			recs[j] = ledgertest.Signed(b, buyer, receipt.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: d, Price: 3,
				ReceiptHash: hash, Receipt: env})
		}
		txs[i] = c.SignAt(buyer, nonce+uint64(i), &ledger.Settlement{Records: recs})
		size += len(txs[i])
	}
	b.ResetTimer()
	for _, tx := range txs {
		if err := c.l.Check(tx); err != nil {
			b.Fatalf("check: %v", err)
		}
		c.mustApply(tx)
	}
	records := float64(b.N * perTx)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
	b.ReportMetric(float64(size)/records, "bytes/record")
}

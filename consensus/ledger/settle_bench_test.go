package ledger_test

import (
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
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
			buyer, gb := ledgertest.Signer(testChain, "buyer", 1<<62)
			op, gop := ledgertest.Signer(testChain, "operator", 10_000)
			c := newChain(b, "", genesisTime, ledgertest.Params(), 1, gb, gop)
			m := newMachine(b)
			c.mustApply(c.sign(op, m.register(b, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1 << 61}))
			txs := make([][]byte, b.N)
			nonce := c.account(buyer.Account()).Nonce
			for i := range txs {
				recs := make([]receipt.PaymentRecord, tc.perTx)
				for j := range recs {
					env, hash, d := m.paidReceipt(b, fmt.Sprint("answer ", i, " ", j), buyer.Account(), buyer.Account(), 3)
					recs[j] = ledgertest.Signed(b, buyer, receipt.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: d, Price: 3,
						ReceiptHash: hash, Receipt: env})
				}
				txs[i] = c.SignAt(buyer, nonce+uint64(i), &ledger.Settlement{Records: recs})
			}
			b.ResetTimer()
			for _, tx := range txs {
				if err := c.l.Check(tx); err != nil {
					b.Fatalf("check: %v", err)
				}
				c.mustApply(tx)
			}
			b.ReportMetric(float64(b.N*tc.perTx)/b.Elapsed().Seconds(), "records/s")
			b.StopTimer()
			if e := c.escrow(buyer.Account(), buyer.Account()); e.Balance != 1<<61-uint64(3*b.N*tc.perTx) {
				b.Fatalf("escrow %d: not every record settled", e.Balance)
			}
		})
	}
}

package ledger_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// BenchmarkSettleLedger measures the application alone (no network): per op,
// one settlement transaction of perTx records goes through Check, then
// Finalize and Commit, on in-memory state. "one-receipt" records all carry
// the same receipt envelope (its session signature verified once), the
// lower bound of the receipt work; "receipts" records each
// carry their own receipt envelope from the provider's machine, verified by
// the chain (one session certificate, verified once per transaction; each
// receipt's and record's signature verified once, in Check, and found in
// the signature cache by Finalize).
func BenchmarkSettleLedger(b *testing.B) {
	for _, tc := range []struct {
		name     string
		perTx    int
		receipts bool
	}{{"one-receipt", 150, false}, {"receipts", 100, true}} {
		b.Run(tc.name, func(b *testing.B) {
			buyer, gb := signer("buyer", 1<<62)
			op, gop := signer("operator", 10_000)
			c := newChain(b, "", genesisTime, testParams(), 1, gb, gop)
			m := newMachine(b)
			c.mustApply(c.sign(op, m.register(b, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1 << 61}))
			shared, sharedHash := m.receipt(b, "answer")
			txs := make([][]byte, b.N)
			nonce := c.account(buyer.Account()).Nonce
			for i := range txs {
				recs := make([]ledger.PaymentRecord, tc.perTx)
				for j := range recs {
					var d ledger.Hash32
					binary.BigEndian.PutUint64(d[:], uint64(i*tc.perTx+j))
					recs[j] = ledger.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: d, Price: 3, ReceiptHash: sharedHash, Receipt: shared}
					if tc.receipts {
						recs[j].Receipt, recs[j].ReceiptHash = m.receipt(b, fmt.Sprint("answer ", i, " ", j))
					}
					recs[j] = signed(b, buyer, recs[j])
				}
				txs[i] = c.signAt(buyer, nonce+uint64(i), &ledger.Settlement{Records: recs})
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

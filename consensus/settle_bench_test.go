package consensus_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// BenchmarkSettleApp measures the application alone (no network): per op,
// one settlement transaction of perTx records goes through CheckTx, then
// FinalizeBlock and Commit, on in-memory state. "receipts" records each
// carry a receipt envelope from the provider's machine, verified by the
// chain (one session certificate, cached within the transaction).
func BenchmarkSettleApp(b *testing.B) {
	for _, tc := range []struct {
		name     string
		perTx    int
		receipts bool
	}{{"plain", 1000, false}, {"receipts", 100, true}} {
		b.Run(tc.name, func(b *testing.B) {
			buyer, gb := signer("buyer", 1<<62)
			op, gop := signer("operator", 10_000)
			c := newChain(b, "", genesisTime, testParams(), 1, gb, gop)
			m, err := testnet.NewMachine(b.TempDir(), genesisTime.Add(-time.Hour), genesisTime.Add(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			reg, err := m.Register(1000, 60)
			if err != nil {
				b.Fatal(err)
			}
			c.mustApply(c.sign(op, reg), c.sign(buyer, &consensus.EscrowFund{Amount: 1 << 61}))
			env, envHash, err := m.Receipt([]byte("answer"))
			if err != nil {
				b.Fatal(err)
			}
			txs := make([][]byte, b.N)
			nonce := c.account(buyer.Account()).Nonce
			for i := range txs {
				recs := make([]consensus.PaymentRecord, tc.perTx)
				for j := range recs {
					var d consensus.Hash32
					binary.BigEndian.PutUint64(d[:], uint64(i*tc.perTx+j))
					recs[j] = consensus.PaymentRecord{Payer: buyer.Account(), Provider: m.MachineID(), RequestDigest: d, Price: 3, ReceiptHash: d}
					if tc.receipts {
						recs[j].Receipt, recs[j].ReceiptHash = env, envHash
					}
				}
				txs[i] = c.signAt(buyer, nonce+uint64(i), &consensus.Settlement{Records: recs})
			}
			b.ResetTimer()
			for _, tx := range txs {
				if r, err := c.app.CheckTx(context.Background(), &abci.CheckTxRequest{Tx: tx}); err != nil || r.Code != 0 {
					b.Fatalf("check: %v %s", err, r.GetLog())
				}
				c.mustApply(tx)
			}
			b.ReportMetric(float64(b.N*tc.perTx)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

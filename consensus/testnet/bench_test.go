package testnet_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// BenchmarkSettlement measures payment records settled per second on an
// in-process chain of 4 validators (timeout_commit 100ms): each op is one
// settlement transaction of 1000 records, broadcast to one node and waited
// for in a committed block. It also reports the mean block time under that
// load and with empty blocks.
func BenchmarkSettlement(b *testing.B) {
	const perTx = 120 // a receipt envelope is ~6 KB; a transaction is at most 1 MB
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	params := ledger.DefaultParams()
	params.MinServingBond = 1
	buyer, op := seedKey("bench-buyer"), seedKey("bench-op")
	id := func(k string) terms.AccountID { return ledgertest.Account(seedKey(k)) }
	net, err := testnet.Start(ctx, b.TempDir(), testnet.Options{
		Validators: 4, Params: &params, BlockTime: 100 * time.Millisecond,
		Accounts: []ledger.GenesisAccount{{Account: id("bench-buyer"), Balance: 1 << 62}, {Account: id("bench-op"), Balance: 10}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer net.Stop(context.Background())
	s := newSender(net)
	n0 := net.Nodes[0]
	prov := ledgertest.TestMachine(b, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	reg, err := prov.Register(net.ChainID, id("bench-op"), 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	submit(ctx, b, n0, s.Sign(b, buyer, &ledger.EscrowFund{Amount: 1 << 61}), s.Sign(b, op, reg))

	h0, t0 := n0.App().Height(), time.Now()
	time.Sleep(2 * time.Second)
	emptyBlock := time.Since(t0) / time.Duration(max(1, n0.App().Height()-h0))

	txs := make([][]byte, b.N)
	expiry := n0.App().Height() + 550 // within the default withdrawal delay (600 blocks)
	for i := range txs {
		recs := make([]receipt.PaymentRecord, perTx)
		for j := range recs {
			env, envHash, d, err := prov.PaidReceipt(binary.BigEndian.AppendUint64(nil, uint64(i*perTx+j)), id("bench-buyer"), id("bench-buyer"), 3)
			if err != nil {
				b.Fatal(err)
			}
			recs[j] = receipt.PaymentRecord{Payer: id("bench-buyer"), Provider: prov.MachineID(),
				RequestDigest: d, QuoteDigest: d, Price: 3, ReceiptHash: envHash, Receipt: env, ExpiryHeight: expiry}
			if err := s.Signer(buyer).SignRecord(&recs[j]); err != nil {
				b.Fatal(err)
			}
		}
		txs[i] = s.Sign(b, buyer, &ledger.Settlement{Records: recs})
	}
	b.ResetTimer()
	start, h1 := time.Now(), n0.App().Height()
	submit(ctx, b, n0, txs...)
	elapsed := time.Since(start)
	blocks := n0.App().Height() - h1
	b.StopTimer()
	b.ReportMetric(float64(b.N*perTx)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(max(1, blocks)), "ms/block")
	b.ReportMetric(float64(emptyBlock.Milliseconds()), "ms/empty-block")
	if e, _, err := n0.Escrow(ctx, id("bench-buyer"), id("bench-buyer")); err != nil || e.Balance != 1<<61-uint64(3*perTx*b.N) {
		b.Fatalf("escrow after %d records: %+v %v", b.N*perTx, e, err)
	}
}

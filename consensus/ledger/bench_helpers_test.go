package ledger_test

import (
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// benchMarket is a one-validator chain with a registered machine m of
// op and a buyer whose own escrow pays for any benchmark's calls.
func benchMarket(b *testing.B) (c *chain, m *machine, buyer, op *ledger.Signer) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1<<62)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c = newChain(b, "", genesisTime, ledgertest.Params(), 1, gb, gop)
	m = newMachine(b)
	c.mustApply(c.sign(op, m.register(b, op, 1000, 60)), c.sign(buyer, &ledger.EscrowFund{Amount: 1 << 61}))
	return c, m, buyer, op
}

// settlementTxs signs n settlements by buyer, from its next nonce, of
// perTx records priced 3 each: every record carries the receipt of its own
// call, as one call pays for one receipt.
func settlementTxs(b *testing.B, c *chain, m *machine, buyer *ledger.Signer, n, perTx int) [][]byte {
	txs := make([][]byte, n)
	nonce := c.account(buyer.Account()).Nonce
	for i := range txs {
		recs := make([]receipt.PaymentRecord, perTx)
		for j := range recs {
			env, hash, d := m.paidReceipt(b, fmt.Sprint("answer ", i, " ", j), buyer.Account(), buyer.Account(), 3)
			recs[j] = ledgertest.Signed(b, buyer, receipt.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: d, Price: 3,
				ReceiptHash: hash, Receipt: env})
		}
		txs[i] = c.SignAt(buyer, nonce+uint64(i), &ledger.Settlement{Records: recs})
	}
	return txs
}

// checkApply runs txs through Check, as the mempool does, then commits
// them in one block and fails unless each applied.
func (c *chain) checkApply(txs ...[]byte) {
	c.T.Helper()
	for _, tx := range txs {
		if err := c.l.Check(tx); err != nil {
			c.T.Fatalf("check: %v", err)
		}
	}
	c.mustApply(txs...)
}

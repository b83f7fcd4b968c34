package ledger_test

import (
	"crypto/sha256"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestConvictionRefundsWholePrice: a guilty verdict gives the buyer's
// escrow back the whole price it paid, fee included: the operator pays
// back its credit and the fee comes out of the slash's burn; a slash that
// burns nothing (all of it rewards the disputer) leaves the fee to the
// operator; an operator that spent its credit leaves all of it to the
// slash; with neither, nothing is reversed. Money is conserved in every
// case; the slash is its reward, burn and refund; the fee pool keeps its
// fee; and the stored record shows the reversal while both its index
// entries hash it, as range proofs need.
func TestConvictionRefundsWholePrice(t *testing.T) {
	const price, fee = 10_000, 7
	for _, tc := range []struct {
		name                 string
		rewardBP             uint64
		drain                bool   // the operator spends everything before the verdict
		wantRefunded, opPays uint64 // from the burn, from the operator
	}{
		{name: "fee from the burn", rewardBP: 4000, wantRefunded: fee, opPays: price - fee},
		{name: "no burn: the operator pays the fee", rewardBP: ledger.BasisPoints, opPays: price},
		{name: "operator spent its credit: the burn pays", rewardBP: 4000, drain: true, wantRefunded: price},
		{name: "neither: no reversal", rewardBP: ledger.BasisPoints, drain: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := disputeParams()
			p.FeePerRecord, p.DisputeRewardBP = fee, tc.rewardBP
			n := newDisputeNetWith(t, p, []int64{10, 10, 10, 10}, false)
			c := n.c
			ev, digest := n.paidAnswer(t, price)
			if tc.drain {
				bal := c.account(n.operator.Account()).Balance
				n.block(c.sign(n.operator, &ledger.Transfer{To: n.buyer.Account(), Amount: bal - p.FeePerTx}))
			}
			before := n.money()
			op0, pool0 := c.account(n.operator.Account()).Balance, c.account(ledger.FeePoolAccount).Balance
			esc0 := c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
			id, drawn := n.openAndDraw(digest, ev)
			n.vote(id, everyone(drawn, ledger.VerdictGuilty))
			d := n.dispute(id)
			if d.Status != ledger.DisputeGuilty {
				t.Fatalf("verdict %v, want guilty", d.Status)
			}
			reversed := tc.wantRefunded + tc.opPays
			if reversed != price && reversed != 0 {
				t.Fatalf("test case refunds %d, not the price %d", reversed, price)
			}
			esc := c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
			if d.Reversed != reversed || esc != esc0+reversed || d.Refunded != tc.wantRefunded {
				t.Fatalf("dispute reversed %d (refunded from the slash %d), escrow %d → %d; want %d (%d from the slash)",
					d.Reversed, d.Refunded, esc0, esc, reversed, tc.wantRefunded)
			}
			if got := c.account(n.operator.Account()).Balance; got != op0-tc.opPays {
				t.Fatalf("operator %d → %d, want it to pay %d", op0, got, tc.opPays)
			}
			if d.Slashed != d.Reward+d.Burned+d.Refunded || d.Slashed == 0 {
				t.Fatalf("slash %d ≠ reward %d + burn %d + refund %d", d.Slashed, d.Reward, d.Burned, d.Refunded)
			}
			var sup ledger.Supply
			c.get(ledger.KeySupply(), &sup)
			if sup.Burned != d.Burned {
				t.Fatalf("supply burned %d, the dispute burned %d", sup.Burned, d.Burned)
			}
			if pool := c.account(ledger.FeePoolAccount).Balance; pool < pool0 {
				t.Fatalf("fee pool %d → %d: it keeps the record's fee", pool0, pool)
			}
			if got := n.money(id); got != before {
				t.Fatalf("money %d after the verdict, %d before", got, before)
			}
			var rec ledger.SettledRecord
			if !c.get(ledger.KeyRecord(n.buyer.Account(), digest), &rec) || rec.Reversed != reversed {
				t.Fatalf("stored record reversed %d, want %d", rec.Reversed, reversed)
			}
			if wantH := map[bool]int64{true: d.ResolveHeight}[reversed > 0]; rec.ReversedHeight != wantH {
				t.Fatalf("record reversed at height %d, want %d", rec.ReversedHeight, wantH)
			}
			raw := c.raw(ledger.KeyRecord(n.buyer.Account(), digest))
			h := sha256.Sum256(raw)
			if got := c.raw(ledger.KeyRecordIndex(rec.Record.Payer, rec.Height, digest)); string(got) != string(h[:]) {
				t.Fatalf("payer index entry %x, the stored record hashes to %x", got, h)
			}
			want := ledger.ProviderRecordIndexValue(rec.Record.Payer, digest, h)
			if got := c.raw(ledger.KeyProviderRecordIndex(rec.Record.Provider, rec.Height, rec.Record.Payer, digest)); string(got) != string(want) {
				t.Fatalf("provider index entry %x, want %x", got, want)
			}
		})
	}
}

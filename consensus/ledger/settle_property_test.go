package ledger_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// escrowModel is what the test expects one escrow to hold.
type escrowModel struct {
	balance, pending uint64
	unlock           int64
}

func (e escrowModel) available() uint64 { return e.balance - e.pending }

// TestSettlementProperty drives a real Ledger through random blocks of
// escrow funding, withdrawals, claims and settlements whose records are
// valid, duplicated (across and within batches), forged, expired or over
// the escrow. A model predicts every record's outcome; after every block
// the reports match the model exactly (so no record settles twice and
// every skip is reported with its code), every escrow and balance matches,
// Σ debited from escrows = Σ credited to the operator + Σ record fees,
// the submitter paid FeePerRecord for each record refused after the
// escrow lookup (never for an expired or duplicate one), and every
// submitter's nonce advanced once per transaction.
func TestSettlementProperty(t *testing.T) {
	const txFee, recFee = 2, 1
	params := ledgertest.Params()
	params.FeePerTx, params.FeePerRecord, params.WithdrawDelayBlocks = txFee, recFee, 3
	buyers := make([]*ledger.Signer, 3)
	gws := make([]*ledger.Signer, 2)
	var accts []ledger.GenesisAccount
	for i := range buyers {
		var g ledger.GenesisAccount
		buyers[i], g = ledgertest.Signer(testChain, "buyer"+string(rune('a'+i)), 1_000_000)
		accts = append(accts, g)
	}
	for i := range gws {
		var g ledger.GenesisAccount
		gws[i], g = ledgertest.Signer(testChain, "gateway"+string(rune('a'+i)), 1_000)
		accts = append(accts, g)
	}
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	forger, _ := ledgertest.Signer(testChain, "forger", 0)
	c := newChain(t, "", genesisTime, params, 1, append(accts, gop)...)
	m := newMachine(t)
	c.mustApply(c.sign(op, m.register(t, op, 1000, 60)))
	type key struct{ payer, settler int }
	escrows := map[key]*escrowModel{}
	settled := map[[64]byte]bool{} // payer ‖ request digest
	var debited, credited, recordFees uint64
	opStart := c.account(op.Account()).Balance
	poolStart := c.account(ledger.FeePoolAccount).Balance
	var txFees, refusedFees uint64
	nonces := map[terms.AccountID]uint64{}
	for _, s := range append(append([]*ledger.Signer{op}, buyers...), gws...) {
		nonces[s.Account()] = c.account(s.Account()).Nonce
	}
	seen := map[ledger.Code]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	digest := uint64(0)

	for blk := range 40 {
		height := c.l.Height() + 1
		var txs [][]byte
		type expect struct {
			code    ledger.Code
			skipped map[int]ledger.Code
			settled int
		}
		var wants []expect
		signTx := func(s *ledger.Signer, p any) {
			txs = append(txs, c.SignAt(s, nonces[s.Account()], p))
		}
		// Each buyer funds, withdraws or claims at most once per block.
		for bi, b := range buyers {
			k := key{bi, rng.IntN(len(gws))}
			e := escrows[k]
			switch rng.IntN(4) {
			case 0:
				amt := uint64(rng.IntN(500) + 1)
				signTx(b, &ledger.EscrowFund{Amount: amt, Settler: gws[k.settler].Account()})
				if e == nil {
					e = &escrowModel{}
					escrows[k] = e
				}
				e.balance += amt
				wants = append(wants, expect{})
				nonces[b.Account()]++
				txFees += txFee
			case 1:
				if e == nil || e.available() == 0 {
					continue
				}
				amt := uint64(rng.IntN(int(e.available()))) + 1
				signTx(b, &ledger.EscrowWithdraw{Amount: amt, Settler: gws[k.settler].Account()})
				e.pending += amt
				e.unlock = height + 3
				wants = append(wants, expect{})
				nonces[b.Account()]++
				txFees += txFee
			case 2:
				if e == nil || e.pending == 0 || height < e.unlock {
					continue
				}
				signTx(b, &ledger.EscrowClaim{Settler: gws[k.settler].Account()})
				e.balance -= e.pending
				e.pending, e.unlock = 0, 0
				wants = append(wants, expect{})
				nonces[b.Account()]++
				txFees += txFee
			}
		}
		// One settlement per block, submitted by the operator.
		var recs []receipt.PaymentRecord
		want := expect{skipped: map[int]ledger.Code{}}
		var prev []receipt.PaymentRecord
		for i := range rng.IntN(8) + 1 {
			bi, gi := rng.IntN(len(buyers)), rng.IntN(len(gws))
			digest++
			env, envHash, rd := m.paidReceipt(t, strconv.FormatUint(digest, 10), buyers[bi].Account(), gws[gi].Account(), 0)
			rec := receipt.PaymentRecord{Payer: buyers[bi].Account(), Provider: m.machineID(), RequestDigest: rd,
				Price: uint64(rng.IntN(60) + 1), ReceiptHash: envHash, Receipt: env, ExpiryHeight: height + int64(rng.IntN(3))}
			kind := rng.IntN(10)
			switch {
			case kind == 0 && len(prev) > 0: // duplicate of an earlier record
				rec = prev[rng.IntN(len(prev))]
				recs = append(recs, rec)
			case kind == 1: // forged: signed by someone who is not the settler
				rec = ledgertest.Signed(t, forger, rec)
				rec.Settler = gws[gi].Account()
				recs = append(recs, rec)
			case kind == 2: // expired
				rec.ExpiryHeight = height - 1
				recs = append(recs, ledgertest.Signed(t, gws[gi], rec))
			case kind == 3: // overdraft
				rec.Price = 1 << 40
				recs = append(recs, ledgertest.Signed(t, gws[gi], rec))
			default:
				recs = append(recs, ledgertest.Signed(t, gws[gi], rec))
			}
			rec = recs[i]
			prev = append(prev, rec)
			var sk [64]byte
			copy(sk[:32], rec.Payer[:])
			copy(sk[32:], rec.RequestDigest[:])
			gIdx := -1
			for j, g := range gws {
				if g.Account() == rec.Settler {
					gIdx = j
				}
			}
			bIdx := -1
			for j, b := range buyers {
				if b.Account() == rec.Payer {
					bIdx = j
				}
			}
			e := escrows[key{bIdx, gIdx}]
			switch {
			case rec.ExpiryHeight < height:
				want.skipped[i] = ledger.CodeExpiredRecord
			case settled[sk]:
				want.skipped[i] = ledger.CodeDuplicateRecord
			case e == nil:
				want.skipped[i] = ledger.CodeUnknownEscrow
			case rec.VerifySig(testChain) != nil:
				want.skipped[i] = ledger.CodeBadRecordSig
			case rec.Price > e.balance: // records draw on pending withdrawals too
				want.skipped[i] = ledger.CodeOverdraft
			default:
				settled[sk] = true
				e.balance -= rec.Price
				e.pending = min(e.pending, e.balance)
				fee := min(uint64(recFee), rec.Price)
				debited += rec.Price
				credited += rec.Price - fee
				recordFees += fee
				want.settled++
			}
		}
		for _, code := range want.skipped {
			seen[code]++
			if code != ledger.CodeExpiredRecord && code != ledger.CodeDuplicateRecord {
				refusedFees += recFee // the submitter pays for a record refused after the escrow lookup
			}
		}
		signTx(op, &ledger.Settlement{Records: recs})
		nonces[op.Account()]++
		txFees += txFee
		wants = append(wants, want)

		res := c.block(txs...)
		for i, w := range wants {
			o := res.Txs[i]
			if o.Code != w.code {
				t.Fatalf("block %d tx %d: %v (%s), want %v", blk, i, o.Code, o.Log, w.code)
			}
			if w.skipped != nil {
				r := wantSkipped(t, o, w.settled, w.skipped)
				var n uint32
				for _, cc := range r.Counts {
					n += cc.Count
				}
				if int(n) != len(r.Skipped) {
					t.Fatalf("block %d: counts %+v do not sum to %d skips", blk, r.Counts, len(r.Skipped))
				}
			}
		}
		for k, e := range escrows {
			got := c.escrow(buyers[k.payer].Account(), gws[k.settler].Account())
			if got.Balance != e.balance || got.Pending != e.pending || got.Unlock != e.unlock {
				t.Fatalf("block %d: escrow %v = %+v, model %+v", blk, k, got, *e)
			}
		}
		opGot := c.account(op.Account()).Balance - opStart
		poolGot := c.account(ledger.FeePoolAccount).Balance - poolStart
		// The operator pays tx fees for its settlements, and record fees
		// for its refused records, out of its credit.
		opFees := uint64(blk+1)*txFee + refusedFees
		if opGot+opFees != credited || poolGot != txFees+recordFees+refusedFees || debited != credited+recordFees {
			t.Fatalf("block %d: operator +%d (+%d fees), pool +%d; model debited %d = credited %d + record fees %d, tx fees %d, refused records' fees %d",
				blk, opGot, opFees, poolGot, debited, credited, recordFees, txFees, refusedFees)
		}
		for id, n := range nonces {
			if got := c.account(id).Nonce; got != n {
				t.Fatalf("block %d: nonce of %s is %d, want %d", blk, id, got, n)
			}
		}
	}
	if len(settled) == 0 || debited == 0 {
		t.Fatal("no record settled: the test exercised nothing")
	}
	for _, code := range []ledger.Code{ledger.CodeExpiredRecord, ledger.CodeDuplicateRecord, ledger.CodeUnknownEscrow,
		ledger.CodeBadRecordSig, ledger.CodeOverdraft} {
		if seen[code] == 0 {
			t.Errorf("no record skipped with %v: the sequence missed a case (%v)", code, seen)
		}
	}
}

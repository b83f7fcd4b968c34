package attacktest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// RejectedRecordCPU is one validator's CPU (CheckTx and the block) for a
// small record refused after its settler signature is verified: a record
// without a receipt, the cheapest refusal to send in bulk (about 3,600
// would fit in one 1 MB transaction; ledger.MaxRecordsPerTx admits 256). BenchmarkRejectedRecord/no-receipt
// measured 142–469 µs at load averages 10–14 on 2 cores (scripts/bench-spam;
// issue 35's note), so 300 µs, not a quiet machine's best case.
const RejectedRecordCPU = 300 * time.Microsecond

// MicroUnitsPerCPUSecond prices one second of one validator core: a
// general-purpose cloud vCPU costs about $0.05 an hour, $14e-6 a second;
// at 1 unit = $1 that is 14 µ, and 20 µ leaves room for the passes the
// benchmark does not count (the proposer's PrepareProposal, mempool
// rechecks after each block).
const MicroUnitsPerCPUSecond = 20

// spamPerTx is the number of failing records in each spam transaction
// (within ledger.MaxRecordsPerTx).
const spamPerTx = 200

// feeSpam floods the chain with settlements of records that all fail
// (valid settler signature, no receipt: refused after signature work) and
// compares what the attacker paid with what the validators spent. The
// chain's rule: every transaction pays fee_per_tx, and every record
// refused at or after its escrow lookup costs its submitter
// fee_per_record. Held when the attacker paid exactly that (n_tx ×
// fee_per_tx + refused × fee_per_record, as the reports' fees say) and,
// at the packing cheapest for it (as many records a transaction as the
// chain takes), that is at least the validators' CPU for the records at
// MicroUnitsPerCPUSecond.
func feeSpam(ctx context.Context, e *env) (Verdict, string, error) {
	p, err := e.c.params(ctx)
	if err != nil {
		return Failed, "", err
	}
	vals := e.t.Validators
	if vals == 0 {
		var vs []json.RawMessage
		if err := call(ctx, e.c.rpc, "tenzro_listValidators", nil, &vs); err != nil {
			return Failed, "", err
		}
		vals = max(len(vs), 1)
	}
	if _, err := e.ownEscrow(ctx); err != nil {
		return Failed, "", err
	}
	a, err := e.paidCall(ctx, "whose provider is spammed")
	if err != nil {
		return Failed, "", err
	}
	b := e.t.buyer()
	a0, err := e.c.account(ctx, b)
	if err != nil {
		return Failed, "", err
	}
	var rejected, reportedFees uint64
	var last receipt.PaymentRecord
	for i := 0; i < e.t.SpamTxs; i++ {
		recs := make([]receipt.PaymentRecord, spamPerTx)
		for j := range recs {
			r := receipt.PaymentRecord{Payer: b, Settler: b, Provider: a.Record.Provider, Price: 1, Units: 1, ExpiryHeight: a0.Height + 50}
			_, _ = rand.Read(r.RequestDigest[:])
			if err := receipt.SignRecord(e.t.BuyerKey, e.c.chainID, &r); err != nil {
				return Failed, "", err
			}
			recs[j] = r
		}
		last = recs[0]
		rep, _, err := e.c.settle(ctx, e.t.BuyerKey, recs)
		if err != nil {
			return Failed, "", err
		}
		if rep.Settled != 0 {
			return Broke, fmt.Sprintf("%d spam records settled", rep.Settled), nil
		}
		if n := rep.Count(ledger.CodeBadReceipt); int(n) != len(recs) {
			return Broke, fmt.Sprintf("spam refused as %s, want every record %v", rep.String(), ledger.CodeBadReceipt), nil
		}
		rejected += uint64(len(rep.Skipped))
		reportedFees += rep.Fee
	}
	a1, err := e.c.account(ctx, b)
	if err != nil {
		return Failed, "", err
	}
	owed := uint64(e.t.SpamTxs)*p.FeePerTx + rejected*p.FeePerRecord
	paid := a0.Balance - a1.Balance
	if a1.Balance > a0.Balance || paid != owed || reportedFees != rejected*p.FeePerRecord {
		return Broke, fmt.Sprintf("the attacker's balance moved %d -> %d (reports: record fees %d) for %d transactions of %d refused records; the rule charges %d × fee_per_tx %d + %d × fee_per_record %d = %d",
			a0.Balance, a1.Balance, reportedFees, e.t.SpamTxs, rejected, e.t.SpamTxs, p.FeePerTx, rejected, p.FeePerRecord, owed), nil
	}
	// The attacker packs each transaction as full as the chain allows, so
	// fee_per_tx is spread thinnest: that packing, not this run's, is the
	// verdict's.
	size, err := recordBytes(last)
	if err != nil {
		return Failed, "", err
	}
	packed := min(ledger.MaxRecordsPerTx, (ledger.MaxTxBytes-1024)/size)
	attacker := float64(paid) * 1000 / float64(rejected)
	worst := float64(p.FeePerTx)*1000/float64(packed) + float64(p.FeePerRecord)*1000
	validators := RejectedRecordCPU.Seconds() * 1000 * float64(vals) * MicroUnitsPerCPUSecond
	detail := fmt.Sprintf("fee_per_tx %d µ, fee_per_record %d µ: %d rejected records cost the attacker %d µ (%.1f µ per 1,000 at %d a tx; %.1f at the %d of %d bytes a tx holds); the %d validators spend ≈ %.1f µ of CPU per 1,000 (%s each at %d µ/s)",
		p.FeePerTx, p.FeePerRecord, rejected, paid, attacker, spamPerTx, worst, packed, size, vals, validators, RejectedRecordCPU, MicroUnitsPerCPUSecond)
	if worst < validators {
		return Broke, detail, nil
	}
	return Held, detail, nil
}

// recordBytes is r's encoded size in a settlement.
func recordBytes(r receipt.PaymentRecord) (int, error) {
	b, err := cborx.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("attacktest: encode record: %w", err)
	}
	return len(b), nil
}

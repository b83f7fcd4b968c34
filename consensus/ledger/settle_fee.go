package ledger

import (
	"crypto/sha256"
	"math/bits"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FeePoolAccount receives every fee. No key controls it: its ID is a hash,
// not an Ed25519 public key anyone holds, so it only accumulates until
// governance decides its use. Fees are integer micro-units, so the pool
// keeps the money invariant exact (Σ escrow debits = Σ operator credits +
// Σ record fees).
var FeePoolAccount = terms.AccountID(sha256.Sum256([]byte("tenzro/v1/fee-pool")))

// Record fees. Every payment record the chain did work on costs one
// FeePerRecord, paid to FeePoolAccount, and who pays depends on the
// outcome:
//
//   - a settled record pays it out of its price (the provider's operator
//     is credited the price less min(FeePerRecord, price)), as it always
//     did;
//   - a record refused at or after its escrow lookup (unknown escrow,
//     settler signature, provider, receipt, binding, price, escrow
//     coverage) is paid for by the settlement's signer, the submitter:
//     validators spent a state read and signature work on it, and a
//     settlement of records that fail would otherwise cost its submitter
//     only FeePerTx, however many records it carries;
//   - a record refused before any of that work (CodeExpiredRecord, a
//     height comparison, or CodeDuplicateRecord, one state read) is
//     free: an honest collector or outbox racing another's submission of
//     the same record must not pay for having lost the race.
//
// A settlement's signer must hold FeePerTx + FeePerRecord × its records up
// front (checked with FeePerTx, before anything runs, so CheckTx refuses
// an unaffordable settlement with CodeFeeTooLow and nothing changes); once
// the records ran it is debited FeePerRecord × the records that were
// charged (chargeRecordFees), the rest of what it held is never taken (a
// hold refunded at once, in effect). Settling records only credits
// accounts, so what was held still covers the debit. Fees move between
// accounts only: Σ debited from escrows = Σ credited to operators + Σ
// settled records' fees, and every account debit for a fee is a credit
// to the fee pool.

// recordFeeExempt reports whether a record refused with c costs its
// submitter nothing (refused before any signature work).
func recordFeeExempt(c Code) bool {
	return c == CodeExpiredRecord || c == CodeDuplicateRecord
}

// upfrontFees is what the signer must hold before the transaction runs:
// FeePerTx, plus FeePerRecord per record of a settlement.
func (r *txRun) upfrontFees() (uint64, error) {
	s, ok := r.tx.Payload.(*Settlement)
	if !ok {
		return r.params.FeePerTx, nil
	}
	hi, perRecords := bits.Mul64(r.params.FeePerRecord, uint64(len(s.Records)))
	if hi != 0 {
		return 0, reject(CodeOverflow, "record fees: %d × %d records overflow", r.params.FeePerRecord, len(s.Records))
	}
	return add(r.params.FeePerTx, perRecords, "fees")
}

// chargeRecordFees debits the settlement's signer FeePerRecord for each
// of the n refused records that are not exempt and credits the fee pool;
// it returns the amount.
func (r *txRun) chargeRecordFees(n uint32) (uint64, error) {
	hi, fee := bits.Mul64(r.params.FeePerRecord, uint64(n))
	if hi != 0 {
		return 0, reject(CodeOverflow, "record fees: %d × %d records overflow", r.params.FeePerRecord, n)
	}
	if fee == 0 {
		return 0, nil
	}
	if err := r.debit(r.tx.Body.Signer, fee, "refused records' fees"); err != nil {
		return 0, err
	}
	if err := r.credit(FeePoolAccount, fee, "refused records' fees"); err != nil {
		return 0, err
	}
	return fee, nil
}

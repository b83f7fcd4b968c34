package ledger

import (
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// settle applies payment records one by one. A structurally malformed
// settlement never gets here (DecodeTx refuses it whole). A record that
// fails a stateful check (duplicate by payer or by provider and request,
// signature, expiry, receipt (required: a record without one is skipped
// with CodeBadReceipt; a provider's receipt must name the record's
// request, payer and settler and sign no higher price), escrow
// coverage, unknown escrow or provider) is skipped: its writes are
// dropped, and its index and code go into the transaction's SettleReport,
// so resubmitting a batch after a crash is safe and one bad record does not
// block the others. A skipped record refused at or after its escrow
// lookup costs the signer FeePerRecord (settle_fee.go; the report's Fee).
// Only a store failure fails the transaction.
func (r *txRun) settle(s *Settlement) error {
	chainID, err := r.chainID()
	if err != nil {
		return err
	}
	receipts := newReceiptChecker(r.blk.Time, r.blk.sigs)
	var rep SettleReport
	var charged uint32 // refused records the submitter pays FeePerRecord for
	for i := range s.Records {
		rec := &s.Records[i]
		ro := NewOverlay(r.st)
		err := r.settleOne(ro, chainID, receipts, i, rec)
		var te *TxError
		switch {
		case err == nil:
			ro.Flush()
			rep.Settled++
		case errors.As(err, &te):
			rep.skip(i, te)
			if !recordFeeExempt(te.Code) {
				charged++
			}
		default:
			return err
		}
	}
	if rep.Fee, err = r.chargeRecordFees(charged); err != nil {
		return err
	}
	data, err := cborx.Marshal(rep)
	if err != nil {
		return fmt.Errorf("ledger: encode settle report: %w", err)
	}
	r.data, r.log = data, rep.String()
	return nil
}

// settleOne checks and applies one record on st; a *TxError means the
// record is skipped.
func (r *txRun) settleOne(st *Overlay, chainID string, receipts *receiptChecker, i int, rec *receipt.PaymentRecord) error {
	if rec.ExpiryHeight < r.blk.Height {
		return reject(CodeExpiredRecord, "record %d: expired at height %d, block is %d", i, rec.ExpiryHeight, r.blk.Height)
	}
	if rec.ExpiryHeight > after(r.blk.Height, r.params.WithdrawDelayBlocks) {
		// Valid for longer than a withdrawal waits: a payer could withdraw
		// and claim before it settles. Settlers sign shorter validities.
		return reject(CodeExpiredRecord, "record %d: valid until height %d, more than the withdrawal delay (%d blocks) after block %d",
			i, rec.ExpiryHeight, r.params.WithdrawDelayBlocks, r.blk.Height)
	}
	key := KeyRecord(rec.Payer, rec.RequestDigest)
	seen, err := st.Get(key)
	if err != nil {
		return err
	}
	if seen != nil {
		return reject(CodeDuplicateRecord, "record %d: request %s of %s already settled", i, rec.RequestDigest, rec.Payer)
	}
	ekey := KeyEscrow(rec.Payer, rec.Settler)
	var e Escrow
	ok, err := Load(st, ekey, &e)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownEscrow, "record %d: payer %s has no escrow with settler %s", i, rec.Payer, rec.Settler)
	}
	sb, err := receipt.RecordSigningBytes(chainID, rec)
	if err != nil {
		return err
	}
	if err := r.blk.sigs.verify(sigKey('r', sb, rec.Sig), func() error { return rec.VerifySigBytes(chainID, sb) }); err != nil {
		return reject(CodeBadRecordSig, "record %d: %v", i, err)
	}
	prov, err := r.providerIn(st, rec.Provider)
	if err != nil {
		if CodeOf(err) == CodeUnknownProvider {
			return reject(CodeUnknownProvider, "record %d: machine %s is not registered", i, rec.Provider)
		}
		return err
	}
	if prov.Barred {
		return reject(CodeConvicted, "record %d: machine %s was convicted at height %d and is paid nothing until it re-bonds", i, rec.Provider, prov.ConvictedAt)
	}
	if len(rec.Receipt) == 0 {
		return reject(CodeBadReceipt, "record %d: no receipt envelope (required)", i)
	}
	bound, err := receipts.check(i, rec, prov.MachineID)
	if err != nil {
		return err
	}
	// Deduped by (provider, request) only when the receipt binds the
	// record's payer and settler: an expert holder's receipt names
	// neither, and marking its call served would let anyone's record for
	// it, from any escrow, pre-empt the serving provider's.
	if bound {
		if err := checkServed(st, i, rec); err != nil {
			return err
		}
	}
	// A record draws on the whole balance, pending withdrawals included:
	// it may have been signed (and the call served) before the payer
	// withdrew, and a withdrawal unlocks only after every record signed
	// before it has expired (WithdrawDelayBlocks > record validity), so a
	// payer cannot leave a provider's records unpayable. What is pending
	// shrinks to what is left.
	if rec.Price > e.Balance {
		return reject(CodeOverdraft, "record %d: price %d over the escrow's balance %d", i, rec.Price, e.Balance)
	}
	if e.Balance, err = sub(e.Balance, rec.Price, "escrow"); err != nil {
		return err
	}
	e.Pending = min(e.Pending, e.Balance)
	if err := Save(st, ekey, e); err != nil {
		return err
	}
	if prov.LastSettled != r.blk.Height {
		prov.LastSettled = r.blk.Height
		if err := Save(st, KeyProvider(prov.MachineID), prov); err != nil {
			return err
		}
	}
	fee := min(r.params.FeePerRecord, rec.Price)
	if err := creditIn(st, prov.Operator, rec.Price-fee, "payment"); err != nil {
		return err
	}
	if err := creditIn(st, FeePoolAccount, fee, "record fee"); err != nil {
		return err
	}
	stored := SettledRecord{Record: *rec, Height: r.blk.Height, TxHash: r.tx.Hash, ReceiptChecked: true, Fee: fee}
	stored.Record.Receipt = nil
	enc, err := cborx.Marshal(stored)
	if err != nil {
		return fmt.Errorf("ledger: encode record %d: %w", i, err)
	}
	idx := RecordIndexValue(enc)
	if bound {
		if err := markServed(st, chainID, rec); err != nil {
			return err
		}
	}
	st.Set(key, enc)
	st.Set(KeyRecordIndex(rec.Payer, r.blk.Height, rec.RequestDigest), idx[:])
	st.Set(KeyProviderRecordIndex(rec.Provider, r.blk.Height, rec.Payer, rec.RequestDigest), ProviderRecordIndexValue(rec.Payer, rec.RequestDigest, idx))
	return nil
}

package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func (r *txRun) escrow(payer AccountID) (Escrow, bool, error) {
	var e Escrow
	ok, err := Load(r.st, KeyEscrow(payer), &e)
	return e, ok, err
}

func (r *txRun) fundEscrow(p *EscrowFund) error {
	payer := r.tx.Body.Signer
	e, _, err := r.escrow(payer)
	if err != nil {
		return err
	}
	if e.Balance, err = add(e.Balance, p.Amount, "escrow"); err != nil {
		return err
	}
	if p.Settler != (AccountID{}) {
		e.Settler = p.Settler
	}
	if err := r.debit(payer, p.Amount, "escrow funding"); err != nil {
		return err
	}
	return Save(r.st, KeyEscrow(payer), e)
}

func (r *txRun) withdrawEscrow(p *EscrowWithdraw) error {
	payer := r.tx.Body.Signer
	e, ok, err := r.escrow(payer)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownEscrow, "%s has no escrow", payer)
	}
	if e.Balance, err = sub(e.Balance, p.Amount, "escrow withdrawal"); err != nil {
		return err
	}
	if err := Save(r.st, KeyEscrow(payer), e); err != nil {
		return err
	}
	return r.credit(payer, p.Amount, "escrow withdrawal")
}

// settle applies payment records in order; any failing record rejects the
// whole batch. Each record is stored under KeyRecord and indexed under
// KeyRecordIndex by the settling height.
func (r *txRun) settle(s *Settlement) error {
	signer := r.tx.Body.Signer
	receipts := newReceiptChecker(r.blk.Time)
	for i := range s.Records {
		rec := &s.Records[i]
		e, ok, err := r.escrow(rec.Payer)
		if err != nil {
			return err
		}
		if !ok {
			return reject(CodeUnknownEscrow, "record %d: payer %s has no escrow", i, rec.Payer)
		}
		if signer != rec.Payer && signer != e.Settler {
			return reject(CodeNotAuthorized, "record %d: %s may not settle against %s's escrow", i, signer, rec.Payer)
		}
		prov, err := r.provider(rec.Provider)
		if CodeOf(err) == CodeUnknownProvider {
			return reject(CodeUnknownProvider, "record %d: machine %s is not registered", i, rec.Provider)
		}
		if err != nil {
			return err
		}
		checked := len(rec.Receipt) > 0
		if checked {
			if err := receipts.check(i, rec, prov.MachineID); err != nil {
				return err
			}
		}
		key := KeyRecord(rec.Payer, rec.RequestDigest)
		seen, err := r.st.Get(key)
		if err != nil {
			return err
		}
		if seen != nil {
			return reject(CodeDuplicateRecord, "record %d: request %x of %s already settled", i, rec.RequestDigest, rec.Payer)
		}
		if e.Balance, err = sub(e.Balance, rec.Price, "escrow"); err != nil {
			return reject(CodeOverdraft, "record %d: %v", i, err)
		}
		if err := Save(r.st, KeyEscrow(rec.Payer), e); err != nil {
			return err
		}
		if err := r.credit(prov.Operator, rec.Price, "payment"); err != nil {
			return err
		}
		stored := SettledRecord{Record: *rec, Height: r.blk.Height, TxHash: r.tx.Hash, ReceiptChecked: checked}
		stored.Record.Receipt = nil
		enc, err := cborx.Marshal(stored)
		if err != nil {
			return fmt.Errorf("ledger: encode record %d: %w", i, err)
		}
		idx := RecordIndexValue(enc)
		r.st.Set(key, enc)
		r.st.Set(KeyRecordIndex(rec.Payer, r.blk.Height, rec.RequestDigest), idx[:])
	}
	return nil
}

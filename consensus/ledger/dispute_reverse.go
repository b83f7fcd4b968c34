package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// reverse pays a convicted record's whole price back to the buyer's
// escrow of (payer, settler), once per record (an earlier conviction over
// another of its expert batches may have done it already).
//
// The price was split at settlement into the operator's credit and the
// record fee (to the fee pool). The fee pool keeps its fee: the chain did
// settle the record. The operator pays back its credit, as far as it
// still holds it; the rest (the fee, and any credit the operator spent)
// comes out of the slash, from the share that would have been burned, so
// the disputer's reward is unchanged and the cheat loses no more than its
// slash and its takings. Only what neither covers (a slash that burns too
// little, from an operator that spent its credit) is not refunded, and the
// operator pays that much more if it can. The chain never takes more than
// an account holds.
//
// Money is conserved: the escrow gains what is refunded, the operator
// loses its part, the burn shrinks by the rest (d.Refunded, so a
// dispute's slash is its reward plus its burn plus its refund).
//
// The stored record is rewritten with the reversal, and its entries in the
// payer and provider indexes follow it (they hold its hash), so evidence
// packs over any range stay verifiable and show the reversal.
func (r *txRun) reverse(d *Dispute) error {
	key := KeyRecord(d.Subject.Payer, d.Subject.RequestDigest)
	var rec SettledRecord
	found, err := Load(r.st, key, &rec)
	if err != nil || !found || rec.Reversed != 0 {
		return err
	}
	price, err := add(d.Credited, min(rec.Fee, rec.Record.Price), "reversal")
	if err != nil {
		return err
	}
	op, _, err := r.account(d.Operator)
	if err != nil {
		return err
	}
	fromOperator := min(d.Credited, op.Balance)
	fromBurn := min(price-fromOperator, d.Burned)
	fromOperator += min(price-fromOperator-fromBurn, op.Balance-fromOperator)
	refund := fromOperator + fromBurn // <= price
	if refund == 0 {
		return nil
	}
	if fromOperator > 0 {
		if err := r.debit(d.Operator, fromOperator, "payment reversal"); err != nil {
			return err
		}
	}
	if fromBurn > 0 {
		var sup Supply
		if _, err := Load(r.st, keySupply, &sup); err != nil {
			return err
		}
		if sup.Burned, err = sub(sup.Burned, fromBurn, "burned"); err != nil {
			return err
		}
		if err := Save(r.st, keySupply, sup); err != nil {
			return err
		}
		if d.Burned, err = sub(d.Burned, fromBurn, "dispute burn"); err != nil {
			return err
		}
		d.Refunded = fromBurn
	}
	if err := r.refundEscrow(d.Subject.Payer, d.Settler, refund); err != nil {
		return err
	}
	d.Reversed = refund
	rec.Reversed, rec.ReversedHeight = refund, r.blk.Height
	return putSettledRecord(r.st, key, &rec)
}

// putSettledRecord stores rec at key and points its payer and provider
// index entries (at its settlement height) at the new bytes: an entry
// holding an older record's hash would make every range proof over it
// fail as "not the one its proof commits to".
func putSettledRecord(st KV, key []byte, rec *SettledRecord) error {
	enc, err := cborx.Marshal(rec)
	if err != nil {
		return fmt.Errorf("ledger: encode record %s: %w", rec.Record.RequestDigest, err)
	}
	idx := RecordIndexValue(enc)
	p, d := rec.Record.Payer, rec.Record.RequestDigest
	st.Set(key, enc)
	st.Set(KeyRecordIndex(p, rec.Height, d), idx[:])
	st.Set(KeyProviderRecordIndex(rec.Record.Provider, rec.Height, p, d), ProviderRecordIndexValue(p, d, idx))
	return nil
}

package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// openStream moves the deposit from the escrow's available balance into a
// new stream. Only the settler may spend a payer's escrow this way: it is
// the one account that knows which of its records are still outstanding
// against that balance.
func (r *txRun) openStream(p *StreamOpen) error {
	signer := r.tx.Body.Signer
	payer, settler := r.settlerOf(p.Payer), r.settlerOf(p.Settler)
	if signer != settler {
		return reject(CodeNotAuthorized, "stream from the escrow of (%s, %s) must be signed by its settler, not %s", payer, settler, signer)
	}
	ekey := KeyEscrow(payer, settler)
	var e Escrow
	ok, err := Load(r.st, ekey, &e)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownEscrow, "%s has no escrow with settler %s", payer, settler)
	}
	if p.Deposit > e.Available() {
		return reject(CodeOverdraft, "stream deposit %d over the escrow's available %d", p.Deposit, e.Available())
	}
	prov, err := r.provider(p.Payee)
	if err != nil {
		return err
	}
	switch {
	case prov.UnbondAt != 0:
		return reject(CodeUnbonding, "payee %s is unbonding", p.Payee)
	case prov.Bond < r.params.MinServingBond:
		return reject(CodeBondTooLow, "payee %s has bond %d, below the minimum %d", p.Payee, prov.Bond, r.params.MinServingBond)
	}
	id := StreamID(signer, r.tx.Body.Nonce, payer, settler, p.Payee)
	skey := KeyStream(id)
	if seen, err := r.st.Get(skey); err != nil {
		return err
	} else if seen != nil {
		return reject(CodeDuplicate, "stream %s already exists", id)
	}
	if e.Balance, err = sub(e.Balance, p.Deposit, "stream deposit"); err != nil {
		return err
	}
	if err := Save(r.st, ekey, e); err != nil {
		return err
	}
	s := Stream{ID: id, Payer: payer, Settler: settler, Payee: p.Payee, Operator: prov.Operator,
		Rate: p.Rate, Deposit: p.Deposit, OpenTime: r.blk.Time, OpenHeight: r.blk.Height}
	if err := Save(r.st, skey, s); err != nil {
		return err
	}
	r.st.Set(KeyStreamIndex(payer, id), []byte{1})
	r.data = append([]byte(nil), id[:]...)
	r.log = fmt.Sprintf("stream %s opened: %d micro-units at %d per hour to %s", id, p.Deposit, p.Rate, p.Payee)
	return nil
}

// liveStream loads an open stream.
func (r *txRun) liveStream(id terms.Hash32) (Stream, error) {
	var s Stream
	ok, err := Load(r.st, KeyStream(id), &s)
	if err != nil {
		return s, err
	}
	switch {
	case !ok:
		return s, reject(CodeUnknownStream, "no stream %s", id)
	case s.Closed:
		return s, reject(CodeStreamClosed, "stream %s closed at height %d", id, s.CloseHeight)
	}
	return s, nil
}

// claimStream pays the operator what accrued since the last claim. A
// stream paid out in full closes.
func (r *txRun) claimStream(p *StreamClaim) error {
	s, err := r.liveStream(p.ID)
	if err != nil {
		return err
	}
	if r.tx.Body.Signer != s.Operator {
		return reject(CodeNotPayee, "stream %s pays operator %s, not %s", s.ID, s.Operator, r.tx.Body.Signer)
	}
	accrued := s.Accrued(r.blk.Time)
	amount, err := sub(accrued, s.Claimed, "stream claim")
	if err != nil {
		return err
	}
	if amount == 0 {
		return reject(CodeOverdraft, "stream %s has nothing accrued since the last claim (accrued %d, claimed %d)", s.ID, accrued, s.Claimed)
	}
	s.Claimed = accrued
	if s.Claimed == s.Deposit {
		r.close(&s)
	}
	if err := Save(r.st, KeyStream(s.ID), s); err != nil {
		return err
	}
	r.log = fmt.Sprintf("stream %s: claimed %d (total %d of %d)", s.ID, amount, s.Claimed, s.Deposit)
	return r.credit(s.Operator, amount, "stream claim")
}

// stopStream pays what accrued up to this block, refunds the rest to the
// escrow and closes the stream.
func (r *txRun) stopStream(p *StreamStop) error {
	s, err := r.liveStream(p.ID)
	if err != nil {
		return err
	}
	if signer := r.tx.Body.Signer; signer != s.Payer && signer != s.Settler {
		return reject(CodeNotAuthorized, "stream %s may be stopped by its payer %s or settler %s, not %s", s.ID, s.Payer, s.Settler, signer)
	}
	accrued := s.Accrued(r.blk.Time)
	pay, err := sub(accrued, s.Claimed, "stream stop")
	if err != nil {
		return err
	}
	refund, err := sub(s.Deposit, accrued, "stream refund")
	if err != nil {
		return err
	}
	s.Claimed, s.Refunded = accrued, refund
	r.close(&s)
	if err := Save(r.st, KeyStream(s.ID), s); err != nil {
		return err
	}
	if err := r.refundEscrow(s.Payer, s.Settler, refund); err != nil {
		return err
	}
	r.log = fmt.Sprintf("stream %s stopped: paid %d, refunded %d", s.ID, pay, refund)
	return r.credit(s.Operator, pay, "stream payment")
}

// close marks s closed at this block and drops it from its payer's index.
func (r *txRun) close(s *Stream) {
	s.Closed, s.CloseTime, s.CloseHeight = true, r.blk.Time, r.blk.Height
	r.st.Del(KeyStreamIndex(s.Payer, s.ID))
}

// refundEscrow adds amount back to the escrow of (payer, settler).
func (r *txRun) refundEscrow(payer, settler terms.AccountID, amount uint64) error {
	if amount == 0 {
		return nil
	}
	key := KeyEscrow(payer, settler)
	var e Escrow
	if _, err := Load(r.st, key, &e); err != nil {
		return err
	}
	var err error
	if e.Balance, err = add(e.Balance, amount, "stream refund"); err != nil {
		return err
	}
	e.Settler = settler
	return Save(r.st, key, e)
}

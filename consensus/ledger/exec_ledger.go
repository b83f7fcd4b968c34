package ledger

import "github.com/tenzrod/tenzrod/receipts/terms"

// settlerOf is the escrow settler a fund/withdraw/claim names: zero means
// the signer itself.
func (r *txRun) settlerOf(s terms.AccountID) terms.AccountID {
	if s == (terms.AccountID{}) {
		return r.tx.Body.Signer
	}
	return s
}

func (r *txRun) fundEscrow(p *EscrowFund) error {
	payer, settler := r.tx.Body.Signer, r.settlerOf(p.Settler)
	var e Escrow
	if _, err := Load(r.st, KeyEscrow(payer, settler), &e); err != nil {
		return err
	}
	var err error
	if e.Balance, err = add(e.Balance, p.Amount, "escrow"); err != nil {
		return err
	}
	e.Settler = settler
	if err := r.debit(payer, p.Amount, "escrow funding"); err != nil {
		return err
	}
	return Save(r.st, KeyEscrow(payer, settler), e)
}

// withdrawEscrow moves Amount of the available balance to Pending; it pays
// out by EscrowClaim at Unlock, so records signed before it can still
// settle (WithdrawDelayBlocks exceeds a record's validity).
func (r *txRun) withdrawEscrow(p *EscrowWithdraw) error {
	payer, settler := r.tx.Body.Signer, r.settlerOf(p.Settler)
	var e Escrow
	ok, err := Load(r.st, KeyEscrow(payer, settler), &e)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownEscrow, "%s has no escrow with settler %s", payer, settler)
	}
	if p.Amount > e.Available() {
		return reject(CodeOverdraft, "escrow withdrawal %d over the available %d", p.Amount, e.Available())
	}
	if e.Pending, err = add(e.Pending, p.Amount, "pending withdrawal"); err != nil {
		return err
	}
	e.Unlock = after(r.blk.Height, r.params.WithdrawDelayBlocks)
	return Save(r.st, KeyEscrow(payer, settler), e)
}

// claimEscrow pays a pending withdrawal out once its unlock height came.
func (r *txRun) claimEscrow(p *EscrowClaim) error {
	payer, settler := r.tx.Body.Signer, r.settlerOf(p.Settler)
	var e Escrow
	ok, err := Load(r.st, KeyEscrow(payer, settler), &e)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return reject(CodeUnknownEscrow, "%s has no escrow with settler %s", payer, settler)
	case e.Pending == 0:
		return reject(CodeOverdraft, "escrow has no pending withdrawal")
	case r.blk.Height < e.Unlock:
		// Its own code, not CodeUnbonding: nothing here is a provider's
		// bond, and the reader needs what waits and until when.
		return reject(CodeWithdrawalLocked, "the withdrawal of %d micro-units is pending until height %d (block is %d): claim it at height %d or later, %d blocks from now",
			e.Pending, e.Unlock, r.blk.Height, e.Unlock, e.Unlock-r.blk.Height)
	}
	amount := e.Pending
	if e.Balance, err = sub(e.Balance, amount, "escrow claim"); err != nil {
		return err
	}
	e.Pending, e.Unlock = 0, 0
	if err := Save(r.st, KeyEscrow(payer, settler), e); err != nil {
		return err
	}
	return r.credit(payer, amount, "escrow claim")
}

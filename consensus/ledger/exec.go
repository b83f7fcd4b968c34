package ledger

import (
	"fmt"
)

// Block is what a transaction sees of the block it runs in.
type Block struct {
	Height      int64
	Time        int64 // unix seconds
	GenesisTime int64 // unix seconds
}

// ValChange is a validator power change (an Ed25519 consensus key and its
// new power; 0 removes the validator).
type ValChange struct {
	PubKey []byte
	Power  int64
}

// txRun is one transaction executing against an overlay.
type txRun struct {
	st      *Overlay
	blk     Block
	tx      *Tx
	signer  Account
	changes []ValChange
}

// Exec applies tx on top of parent: on success the writes are flushed to
// parent and the validator changes returned; on failure parent is untouched.
func Exec(parent KV, blk Block, tx *Tx) ([]ValChange, error) {
	r := &txRun{st: NewOverlay(parent), blk: blk, tx: tx}
	if err := r.checkNonce(); err != nil {
		return nil, err
	}
	if err := r.dispatch(); err != nil {
		return nil, err
	}
	// Reload the signer: the handler may have changed its balance.
	acct, _, err := r.account(tx.Body.Signer)
	if err != nil {
		return nil, err
	}
	acct.Nonce++
	if err := Save(r.st, KeyAccount(tx.Body.Signer), acct); err != nil {
		return nil, err
	}
	r.st.Flush()
	return r.changes, nil
}

func (r *txRun) checkNonce() error {
	acct, ok, err := r.account(r.tx.Body.Signer)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownAccount, "signer %s has no account", r.tx.Body.Signer)
	}
	switch n := r.tx.Body.Nonce; {
	case n < acct.Nonce:
		return reject(CodeStaleNonce, "nonce %d already used by %s (next %d)", n, r.tx.Body.Signer, acct.Nonce)
	case n > acct.Nonce:
		return reject(CodeFutureNonce, "nonce %d ahead of %s's next nonce %d", n, r.tx.Body.Signer, acct.Nonce)
	}
	r.signer = acct
	return nil
}

func (r *txRun) dispatch() error {
	switch p := r.tx.Payload.(type) {
	case *Transfer:
		return r.transfer(p)
	case *ValidatorStake:
		return r.stake(p)
	case *ValidatorUnstake:
		return r.unstake(p)
	case *ProviderRegister:
		return r.register(p)
	case *ProviderUnbond:
		return r.unbond(p)
	case *ProviderWithdraw:
		return r.withdrawBond(p)
	case *ParamProposal:
		return r.propose(p)
	case *ParamVote:
		return r.vote(p)
	case *EscrowFund:
		return r.fundEscrow(p)
	case *EscrowWithdraw:
		return r.withdrawEscrow(p)
	case *Settlement:
		return r.settle(p)
	case *SLAVerdict:
		return r.verdict(p)
	case *NameBind:
		return r.bindName(p)
	case *NameProposal:
		return r.proposeName(p)
	}
	return reject(CodeMalformed, "no handler for payload %T", r.tx.Payload)
}

// account loads an account; a missing one is the zero Account and false.
func (r *txRun) account(id AccountID) (Account, bool, error) {
	var a Account
	ok, err := Load(r.st, KeyAccount(id), &a)
	return a, ok, err
}

// debit subtracts amount from an existing account's balance.
func (r *txRun) debit(id AccountID, amount uint64, what string) error {
	a, ok, err := r.account(id)
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeUnknownAccount, "%s: account %s does not exist", what, id)
	}
	if a.Balance, err = sub(a.Balance, amount, what+" from "+id.String()); err != nil {
		return err
	}
	return Save(r.st, KeyAccount(id), a)
}

// credit adds amount to an account, creating it if needed.
func (r *txRun) credit(id AccountID, amount uint64, what string) error {
	a, _, err := r.account(id)
	if err != nil {
		return err
	}
	if a.Balance, err = add(a.Balance, amount, what+" to "+id.String()); err != nil {
		return err
	}
	return Save(r.st, KeyAccount(id), a)
}

func (r *txRun) params() (Params, error) {
	var p Params
	ok, err := Load(r.st, keyParams, &p)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, fmt.Errorf("ledger: state has no parameters")
	}
	return p, nil
}

func (r *txRun) transfer(p *Transfer) error {
	if p.To == r.tx.Body.Signer {
		return reject(CodeMalformed, "transfer to self")
	}
	if err := r.debit(r.tx.Body.Signer, p.Amount, "transfer"); err != nil {
		return err
	}
	return r.credit(p.To, p.Amount, "transfer")
}

package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Block is what a transaction sees of the block it runs in.
type Block struct {
	Height      int64
	Time        int64 // unix seconds
	GenesisTime int64 // unix seconds
	// Hash is the block's hash (the consensus engine's), the seed of the
	// dispute committees drawn in it.
	Hash terms.Hash32

	sigs *sigCache // verified signatures shared by Check and Finalize; nil = none
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
	params  Params
	changes []ValChange
	data    []byte // result data (a settlement's SettleReport)
	log     string // result log of an applied transaction
}

// Effects is what an applied transaction returns besides its writes.
type Effects struct {
	Changes []ValChange
	Data    []byte // canonical CBOR of a SettleReport for settlements
	Log     string
}

// Exec applies tx on top of parent: on success the writes are flushed to
// parent; on failure parent is untouched. It is the mempool's (Check) and
// the proposer's (Prepare) view: what fails here is not admitted.
func Exec(parent KV, blk Block, tx *Tx) (Effects, error) { return run(parent, blk, tx, false) }

// Deliver applies tx inside a decided block. Unlike Exec, a transaction
// that passes its nonce and fee checks but then fails still consumes its
// nonce and pays FeePerTx (its other writes are dropped): a failing
// transaction is never free block space, and its nonce cannot be replayed.
func Deliver(parent KV, blk Block, tx *Tx) (Effects, error) { return run(parent, blk, tx, true) }

func run(parent KV, blk Block, tx *Tx, charged bool) (Effects, error) {
	outer := NewOverlay(parent)
	r := &txRun{st: outer, blk: blk, tx: tx}
	if err := r.checkNonce(); err != nil {
		return Effects{}, err
	}
	var err error
	if r.params, err = r.loadParams(); err != nil {
		return Effects{}, err
	}
	if err := r.chargeFee(); err != nil {
		return Effects{}, err
	}
	r.st = NewOverlay(outer)
	if err := r.dispatch(); err != nil {
		if charged && CodeOf(err) != CodeInternal {
			outer.Flush()
		}
		return Effects{}, err
	}
	r.st.Flush()
	outer.Flush()
	return Effects{Changes: r.changes, Data: r.data, Log: r.log}, nil
}

// chargeFee takes FeePerTx from the signer for the fee pool and consumes
// the nonce; a signer that cannot pay is refused (nothing consumed). A
// settlement's signer must also hold FeePerRecord for each of its records
// up front (upfrontFees): what its refused records cost it is debited
// once they ran (settle), so the check is what makes that debit payable.
func (r *txRun) chargeFee() error {
	acct := r.signer
	fee := r.params.FeePerTx
	need, err := r.upfrontFees()
	if err != nil {
		return err
	}
	if acct.Balance < need {
		if need == fee {
			return reject(CodeFeeTooLow, "%s has %d, fee is %d", r.tx.Body.Signer, acct.Balance, fee)
		}
		records := 0
		if s, ok := r.tx.Payload.(*Settlement); ok {
			records = len(s.Records)
		}
		return reject(CodeFeeTooLow, "%s has %d, a settlement of %d records needs fee_per_tx %d + fee_per_record %d per record = %d up front",
			r.tx.Body.Signer, acct.Balance, records, fee, r.params.FeePerRecord, need)
	}
	acct.Balance -= fee
	acct.Nonce++
	if err := Save(r.st, KeyAccount(r.tx.Body.Signer), acct); err != nil {
		return err
	}
	return r.credit(FeePoolAccount, fee, "tx fee")
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
	case *EscrowClaim:
		return r.claimEscrow(p)
	case *SLAVerdict:
		return r.verdict(p)
	case *NameBind:
		return r.bindName(p)
	case *NameProposal:
		return r.proposeName(p)
	case *StreamOpen:
		return r.openStream(p)
	case *StreamClaim:
		return r.claimStream(p)
	case *StreamStop:
		return r.stopStream(p)
	case *PlanOpen:
		return r.openPlan(p)
	case *PlanDecide:
		return r.decidePlan(p)
	case *ModelDeclare:
		return r.declareModel(p)
	case *DisputeOpen:
		return r.openDispute(p)
	case *DisputeVote:
		return r.voteDispute(p)
	case *ProviderRebond:
		return r.rebond(p)
	}
	return reject(CodeMalformed, "no handler for payload %T", r.tx.Payload)
}

// account loads an account; a missing one is the zero Account and false.
func (r *txRun) account(id terms.AccountID) (Account, bool, error) {
	var a Account
	ok, err := Load(r.st, KeyAccount(id), &a)
	return a, ok, err
}

// debit subtracts amount from an existing account's balance.
func (r *txRun) debit(id terms.AccountID, amount uint64, what string) error {
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
func (r *txRun) credit(id terms.AccountID, amount uint64, what string) error {
	return creditIn(r.st, id, amount, what)
}

// creditIn adds amount to an account in st, creating it if needed; a zero
// amount writes nothing.
func creditIn(st KV, id terms.AccountID, amount uint64, what string) error {
	if amount == 0 {
		return nil
	}
	var a Account
	if _, err := Load(st, KeyAccount(id), &a); err != nil {
		return err
	}
	var err error
	if a.Balance, err = add(a.Balance, amount, what+" to "+id.String()); err != nil {
		return err
	}
	return Save(st, KeyAccount(id), a)
}

// chainID is the chain ID kept in state.
func (r *txRun) chainID() (string, error) {
	var m ChainMeta
	if _, err := Load(r.st, keyMeta, &m); err != nil {
		return "", err
	}
	return m.ChainID, nil
}

func (r *txRun) loadParams() (Params, error) {
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

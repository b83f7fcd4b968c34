package consensus

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DefaultCommitWait bounds how long Submit waits for a broadcast
// transaction to be committed.
const DefaultCommitWait = 30 * time.Second

// maxNonceRetries bounds how often Submit re-signs after a nonce refusal.
const maxNonceRetries = 3

// Submitter signs, broadcasts and waits for one account's transactions on
// a running node, one at a time, keeping the account's next nonce. It
// recovers from nonce refusals (another process using the same key, a
// transaction still pending from an abandoned wait) by re-reading the
// account and re-signing. It is safe for concurrent use; submissions are
// serialized so nonces are used in order.
type Submitter struct {
	node *Node
	key  ed25519.PrivateKey
	acct terms.AccountID
	log  *slog.Logger
	wait time.Duration

	mu    sync.Mutex
	next  uint64 // the nonce to use next, when known
	known bool
}

// NewSubmitter returns a submitter for the account of key on node; a nil
// logger discards.
func NewSubmitter(node *Node, key ed25519.PrivateKey, logger *slog.Logger) (*Submitter, error) {
	if node == nil {
		return nil, errors.New("consensus: submitter: no node")
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("consensus: submitter: account key is %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Submitter{node: node, key: key, acct: terms.AccountOf(key.Public().(ed25519.PublicKey)), log: logger, wait: DefaultCommitWait}, nil
}

// Account is the submitting account.
func (s *Submitter) Account() terms.AccountID { return s.acct }

// SetCommitWait changes how long Submit waits for a commit.
func (s *Submitter) SetCommitWait(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait = d
}

// Submit signs payload (a pointer to a transaction payload, e.g.
// *Transfer) with the account's next nonce, broadcasts it and waits until
// it is committed. A transaction refused by the mempool or rejected in its
// block is a *TxError carrying its code; a rejected transaction uses no
// nonce.
func (s *Submitter) Submit(ctx context.Context, payload any) (TxResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chainID := s.node.App().ChainID()
	if chainID == "" {
		return TxResult{}, errors.New("consensus: submit: no chain ID yet (genesis not applied)")
	}
	hash, err := s.broadcastNext(ctx, ledger.NewSigner(s.key, chainID), payload)
	if err != nil {
		return TxResult{}, err
	}
	res, err := s.waitCommit(ctx, hash)
	if err != nil {
		// Unknown outcome: the transaction may still commit.
		s.known = false
		return res, err
	}
	if res.Code != ledger.CodeOK {
		// Rejected in its block: the chain's nonce is the one to use next.
		s.known = false
		return res, &ledger.TxError{Code: res.Code, Msg: res.Log}
	}
	return res, nil
}

// recoverNonce picks the nonce to try after the mempool refused nonce
// tried with code c. The committed nonce is the answer unless it is the one
// just refused as stale: then a transaction of ours with that nonce is
// still in the mempool, and the next one is free.
func (s *Submitter) recoverNonce(ctx context.Context, tried uint64, c ledger.Code) {
	a, _, err := s.node.Account(ctx, s.acct)
	switch {
	case err != nil:
		s.known = false
	case c == ledger.CodeStaleNonce && a.Nonce <= tried:
		s.next, s.known = tried+1, true
	default:
		s.next, s.known = a.Nonce, true
	}
	s.log.Info("consensus: submit: nonce refused; retrying", "account", s.acct, "tried", tried, "code", c, "next", s.next)
}

func (s *Submitter) waitCommit(ctx context.Context, hash [32]byte) (TxResult, error) {
	wctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	return s.node.WaitTx(wctx, hash)
}

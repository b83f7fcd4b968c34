package consensus

import (
	"context"
	"errors"
	"fmt"

	"github.com/cometbft/cometbft/mempool"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// ErrNotSent marks the payloads SubmitMany did not broadcast because an
// earlier one was refused.
var ErrNotSent = errors.New("consensus: submit: not sent (an earlier transaction was refused)")

// SubmitMany signs payloads with consecutive nonces, broadcasts them all
// and only then waits for each commit, so that they share blocks instead
// of waiting one block each. Result i and error i are what Submit would
// return for payload i; after a broadcast refusal the remaining payloads
// are not sent (ErrNotSent). An unknown outcome (a wait that ends first)
// makes the next submission re-read the account's nonce.
func (s *Submitter) SubmitMany(ctx context.Context, payloads []any) ([]TxResult, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, errs := make([]TxResult, len(payloads)), make([]error, len(payloads))
	chainID := s.node.App().ChainID()
	if chainID == "" {
		for i := range errs {
			errs[i] = errors.New("consensus: submit: no chain ID yet (genesis not applied)")
		}
		return res, errs
	}
	signer := ledger.NewSigner(s.key, chainID)
	hashes := make([][32]byte, 0, len(payloads))
	for i, p := range payloads {
		h, err := s.broadcastNext(ctx, signer, p)
		if err != nil {
			errs[i] = err
			for j := i + 1; j < len(payloads); j++ {
				errs[j] = ErrNotSent
			}
			break
		}
		hashes = append(hashes, h)
	}
	for i, h := range hashes {
		r, err := s.waitCommit(ctx, h)
		res[i] = r
		switch {
		case err != nil:
			s.known, errs[i] = false, err
		case r.Code != ledger.CodeOK:
			s.known, errs[i] = false, &ledger.TxError{Code: r.Code, Msg: r.Log}
		}
	}
	return res, errs
}

// broadcastNext signs p with the next nonce and broadcasts it, recovering
// from nonce refusals (recoverNonce); on success the nonce is used.
func (s *Submitter) broadcastNext(ctx context.Context, signer *ledger.Signer, p any) ([32]byte, error) {
	for attempt := 0; ; attempt++ {
		if !s.known {
			a, _, err := s.node.Account(ctx, s.acct)
			if err != nil {
				return [32]byte{}, fmt.Errorf("consensus: submit: read account %s: %w", s.acct, err)
			}
			s.next, s.known = a.Nonce, true
		}
		nonce := s.next
		raw, err := signer.SignTx(nonce, p)
		if err != nil {
			return [32]byte{}, err
		}
		hash, err := s.node.BroadcastTx(ctx, raw)
		c := ledger.CodeOf(err)
		if errors.Is(err, mempool.ErrTxInCache) {
			// The very same bytes were seen: this nonce went to an
			// identical transaction (another submitter on this key).
			c = ledger.CodeStaleNonce
		}
		switch {
		case err == nil:
			s.next = nonce + 1
			return hash, nil
		case (c == ledger.CodeStaleNonce || c == ledger.CodeFutureNonce) && attempt < maxNonceRetries:
			s.recoverNonce(ctx, nonce, c)
		default:
			return [32]byte{}, err
		}
	}
}

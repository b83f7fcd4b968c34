package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
)

// txPollInterval is the pause between polls while waiting for a commit;
// blocks come every 0.5–1 s on the devnet and default networks.
const txPollInterval = 200 * time.Millisecond

// waitCommit polls tenzro_getTx until the transaction is in a block or
// --wait runs out.
func (s *txSession) waitCommit(hash string) (chainapi.TxView, error) {
	ctx, cancel := context.WithTimeout(s.cmd.Context(), s.opts.wait)
	defer cancel()
	for {
		var v chainapi.TxView
		err := callInto(ctx, s.client, "tenzro_getTx", chainapi.TxParams{Hash: hash}, &v)
		var re *shell.RPCError
		switch {
		case err == nil && v.Height > 0:
			return v, nil
		case err != nil && (!errors.As(err, &re) || re.Code != rpcInvalidParams):
			if ctx.Err() == nil {
				return v, fmt.Errorf("tx: wait for %s: %w", hash, err)
			}
		}
		select {
		case <-ctx.Done():
			if s.cmd.Context().Err() != nil {
				return v, fmt.Errorf("tx: wait for %s: %w", hash, s.cmd.Context().Err())
			}
			return v, fmt.Errorf("tx: %s not committed within --wait %s; it may still commit (check with tenzro_getTx)", hash, s.opts.wait)
		case <-time.After(txPollInterval):
		}
	}
}

// waitNonceAbove polls the account until its committed nonce is above
// nonce (the pending transaction holding it committed) or --wait runs out.
func (s *txSession) waitNonceAbove(nonce uint64) error {
	wait := s.opts.wait
	if wait == 0 {
		wait = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(s.cmd.Context(), wait)
	defer cancel()
	for {
		v, err := s.accountView(s.account)
		if err == nil && v.Nonce > nonce {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("tx: nonce %d of %s still held by a pending transaction after %s (last: %w)", nonce, s.account, wait, err)
		case <-time.After(txPollInterval):
		}
	}
}

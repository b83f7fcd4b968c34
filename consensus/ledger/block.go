package ledger

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Finalize is FinalizeHashed with a block hash derived from the height,
// for engines (and tests) that have none.
func (l *Ledger) Finalize(height int64, blockTime time.Time, txs [][]byte) (BlockResult, error) {
	return l.FinalizeHashed(height, blockTime, StandInBlockHash(height), txs)
}

// StandInBlockHash is the block hash Finalize uses: SHA-256 of a domain
// and the height.
func StandInBlockHash(height int64) terms.Hash32 {
	return sha256.Sum256(cat("tenzro/v1/stand-in-block-hash", u64(nonNeg(height))))
}

// FinalizeHashed executes a decided block's transactions, each
// atomically, and stages the new state; Commit makes it durable. height
// must follow the last commit; hash is the block's hash, which seeds the
// dispute committees drawn before its transactions run. A store failure is
// an error and the block is not staged. The block's height and time are
// not written into the state (Commit keeps them beside it): a block with
// nothing to do leaves the app hash as it was, and CometBFT then waits for
// transactions (create_empty_blocks_interval) instead of making the next
// block at once to prove a new one.
func (l *Ledger) FinalizeHashed(height int64, blockTime time.Time, hash terms.Hash32, txs [][]byte) (BlockResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if want := l.store.Height() + 1; height != want {
		return BlockResult{}, fmt.Errorf("ledger: finalize height %d, want %d", height, want)
	}
	parent := l.store.Root()
	t, err := l.store.Open(parent)
	if err != nil {
		return BlockResult{}, err
	}
	kv := NewTrieKV(t)
	blk := Block{Height: height, Time: blockTime.Unix(), GenesisTime: l.meta.GenesisTime, Hash: hash, sigs: l.sigs}
	if err := l.disputeTick(kv, blk); err != nil {
		return BlockResult{}, err
	}
	if kv.Err() != nil {
		return BlockResult{}, kv.Err()
	}
	out := BlockResult{Txs: make([]TxOutcome, len(txs))}
	var changes []ValChange
	for i, raw := range txs {
		ch, res := l.deliver(kv, blk, raw)
		if kv.Err() != nil {
			return BlockResult{}, kv.Err()
		}
		changes = append(changes, ch...)
		out.Txs[i] = res
	}
	root, err := l.store.Stage(t, parent, height)
	if err != nil {
		return BlockResult{}, err
	}
	l.pendingRoot, l.pendingHeight, l.pendingTime, l.pending = root, height, blk.Time, true
	out.Changes, out.AppHash = mergeChanges(changes), root[:]
	return out, nil
}

// deliver runs one transaction and describes its outcome.
func (l *Ledger) deliver(s KV, blk Block, raw []byte) ([]ValChange, TxOutcome) {
	tx, err := DecodeTx(l.meta.ChainID, raw)
	if err != nil {
		return nil, TxOutcome{Code: CodeOf(err), Log: err.Error()}
	}
	out := TxOutcome{Kind: tx.Body.Kind, Signer: tx.Body.Signer}
	eff, err := Deliver(s, blk, tx)
	if err != nil {
		out.Code, out.Log = CodeOf(err), err.Error()
		return nil, out
	}
	out.Data, out.Log = eff.Data, eff.Log
	return eff.Changes, out
}

// Commit writes the state staged by Finalize to disk.
func (l *Ledger) Commit() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pending {
		return fmt.Errorf("ledger: commit without a finalized block")
	}
	if err := l.store.Commit(l.pendingRoot, l.pendingHeight, l.pendingTime); err != nil {
		return err
	}
	l.pending = false
	l.meta.Height, l.meta.Time = l.pendingHeight, l.pendingTime
	l.resetCheck()
	l.maybeSnapshot(Stamp{Height: l.pendingHeight, Time: l.pendingTime}, l.pendingRoot)
	if l.keep > 0 && l.pendingHeight%max(1, l.keep/10) == 0 {
		// A failed prune leaves more state than needed, never less: the
		// block is committed either way.
		st, err := l.store.Prune(l.keep, l.snap.pinned()...)
		if err != nil {
			l.log.Error("ledger: prune state", "height", l.pendingHeight, "err", err)
		} else {
			l.log.Debug("ledger: pruned state", "height", l.pendingHeight, "kept_from", st.KeptFrom,
				"kept_nodes", st.KeptNodes, "deleted_nodes", st.DeletedNodes, "deleted_roots", st.DeletedRoots)
		}
	}
	return nil
}

// Check admits a transaction to the mempool view when it would apply on
// top of the committed state and the transactions already admitted; the
// error is a *TxError.
func (l *Ledger) Check(raw []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.check == nil {
		return reject(CodeInternal, "no state yet")
	}
	// The last block's time is the best guess of the next one's.
	blk := Block{Height: l.store.Height() + 1, Time: l.meta.Time, GenesisTime: l.meta.GenesisTime, sigs: l.sigs}
	tx, err := DecodeTx(l.meta.ChainID, raw)
	if err == nil {
		_, err = Exec(l.check, blk, tx)
	}
	return err
}

// Prepare keeps, in order and within maxBytes, the transactions that
// apply on top of the committed state, or that pay their fee and nonce
// and then fail (proposable), for a block proposal at height.
func (l *Ledger) Prepare(height int64, blockTime time.Time, txs [][]byte, maxBytes int64) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.store.Open(l.store.Root())
	if err != nil {
		return nil, err
	}
	sim := NewOverlay(NewTrieKV(t))
	blk := Block{Height: height, Time: blockTime.Unix(), GenesisTime: l.meta.GenesisTime, sigs: l.sigs}
	var (
		out  [][]byte
		size int64
	)
	for _, raw := range txs {
		if size+int64(len(raw)) > maxBytes {
			break
		}
		tx, err := DecodeTx(l.meta.ChainID, raw)
		if err == nil {
			err = proposable(sim, blk, tx)
		}
		if err != nil {
			l.log.Debug("ledger: proposal drops tx", "err", err)
			continue
		}
		out = append(out, raw)
		size += int64(len(raw))
	}
	return out, nil
}

// proposable runs tx on sim as its block will (Deliver) and reports,
// as nil, that it belongs in the proposal: when it applies, and also when
// it passes its nonce and fee checks but then fails (a reveal behind the
// reveals that decided its dispute), which the block records as a failed
// transaction that consumed its nonce and fee. Dropping such a one would
// leave a gap before the signer's later transactions, and the mempool's
// recheck would evict them all.
func proposable(sim KV, blk Block, tx *Tx) error {
	var before, after Account
	if _, err := Load(sim, KeyAccount(tx.Body.Signer), &before); err != nil {
		return err
	}
	_, err := Deliver(sim, blk, tx)
	if err == nil {
		return nil
	}
	if _, lerr := Load(sim, KeyAccount(tx.Body.Signer), &after); lerr != nil {
		return lerr
	}
	if after.Nonce > before.Nonce {
		return nil
	}
	return err
}

// Screen reports the first transaction of a proposed block that does not
// decode or whose signature fails (nil when all do); stateful failures are
// left to Finalize, which records them as rejected transactions.
func (l *Ledger) Screen(txs [][]byte) error {
	chainID := l.ChainID()
	for _, raw := range txs {
		if _, err := DecodeTx(chainID, raw); err != nil {
			return err
		}
	}
	return nil
}

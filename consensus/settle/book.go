package settle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	ds "github.com/ipfs/go-datastore"
)

// ErrDuplicate is a second, different record for a (payer, request
// digest) this store already holds.
var ErrDuplicate = errors.New("settle: a record for this payer and request is already held")

// book is the durable set of records one component holds, with the
// pending ones in memory. Writes of new records run concurrently (pebble
// groups their fsyncs); transitions of held records are serialized by
// tmu so that two of them never race on one key.
type book struct {
	st *store
	// onPending is called under mu when a record enters (+) or leaves
	// (-) the pending set; the components keep their sums in it.
	onPending func(e *Entry, add bool) error

	use sync.RWMutex // store users hold it shared, close exclusively
	tmu sync.Mutex   // serializes transitions (update, finish)

	mu       sync.Mutex
	closed   bool
	pending  map[rkey]*Entry
	reserved map[rkey]bool // being written by add
	final    [StateSkipped + 1]int
}

func openBook(ctx context.Context, dir string, onPending func(*Entry, bool) error) (*book, error) {
	st, err := openStore(dir)
	if err != nil {
		return nil, err
	}
	b := &book{st: st, onPending: onPending, pending: map[rkey]*Entry{}, reserved: map[rkey]bool{}}
	if err := b.load(ctx); err != nil {
		return nil, errors.Join(err, st.close())
	}
	return b, nil
}

// load rebuilds the pending set and the final counts from disk. A stored
// entry that does not decode fails the open: it is money, and dropping it
// silently would lose it.
func (b *book) load(ctx context.Context) error {
	err := b.st.scan(ctx, statePrefix(StatePending), false, func(key string, val []byte) error {
		e, err := DecodeEntry(val)
		if err != nil {
			return fmt.Errorf("settle: load %s: %w", key, err)
		}
		k := keyOf(&e.Record)
		if entryKey(StatePending, k).String() != key || e.State != StatePending {
			return fmt.Errorf("settle: load %s: entry for %s in state %s stored under the wrong key", key, k, e.State)
		}
		b.pending[k] = e
		return b.onPending(e, true)
	})
	if err != nil {
		return err
	}
	for _, s := range []State{StateSettled, StateSkipped} {
		err := b.st.scan(ctx, statePrefix(s), true, func(string, []byte) error { b.final[s]++; return nil })
		if err != nil {
			return err
		}
	}
	return nil
}

// close closes the store; later calls fail with ErrClosed.
func (b *book) close() error {
	b.use.Lock()
	defer b.use.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	return b.st.close()
}

// enter holds off close for one operation and, for a write (a
// transition), serialises it with the other writers; it fails once the
// book is closed. The caller runs end when the operation is over. close
// cannot slip in between: it waits for the shared use lock.
func (b *book) enter(write bool) (end func(), err error) {
	b.use.RLock()
	if write {
		b.tmu.Lock()
	}
	end = func() {
		if write {
			b.tmu.Unlock()
		}
		b.use.RUnlock()
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		end()
		return nil, ErrClosed
	}
	return end, nil
}

// lookup returns the stored entry for k in any state (nil when none).
func (b *book) lookup(ctx context.Context, k rkey) (*Entry, error) {
	b.use.RLock()
	defer b.use.RUnlock()
	return b.lookupLocked(ctx, k)
}

func (b *book) lookupLocked(ctx context.Context, k rkey) (*Entry, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	if e, ok := b.pending[k]; ok {
		b.mu.Unlock()
		return e, nil
	}
	b.mu.Unlock()
	for _, s := range []State{StateSettled, StateSkipped} {
		v, err := b.st.get(ctx, entryKey(s, k))
		if err != nil || v == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		e, err := DecodeEntry(v)
		if err != nil {
			return nil, fmt.Errorf("settle: read %s: %w", k, err)
		}
		return e, nil
	}
	return nil, nil
}

// add durably stores e as a new pending record, with extra keys in the
// same batch, and returns once it is on disk. The record counts in the
// sums (onPending) from the moment it is reserved, so a sum read while it
// is being written already includes it. A record already held (or being
// added) for the same key is ErrDuplicate, with the held entry when it is
// stored.
func (b *book) add(ctx context.Context, e *Entry, extra []kv) (*Entry, error) {
	k := keyOf(&e.Record)
	e.State = StatePending
	v, err := encodeEntry(e)
	if err != nil {
		return nil, err
	}
	end, err := b.enter(false)
	if err != nil {
		return nil, err
	}
	defer end()
	b.mu.Lock()
	if held, ok := b.pending[k]; ok {
		b.mu.Unlock()
		return held, ErrDuplicate
	}
	if b.reserved[k] {
		b.mu.Unlock()
		return nil, ErrDuplicate
	}
	if err := b.onPending(e, true); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	b.reserved[k] = true
	b.mu.Unlock()
	stored := false
	defer func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.reserved, k)
		if stored {
			b.pending[k] = e
		} else if err := b.onPending(e, false); err != nil {
			panic(fmt.Sprintf("settle: unreserve %s: %v", k, err))
		}
	}()
	held, err := b.lookupLocked(ctx, k)
	if err != nil {
		return nil, err
	}
	if held != nil {
		return held, ErrDuplicate
	}
	if err := b.st.write(ctx, append([]kv{{entryKey(StatePending, k), v}}, extra...), nil); err != nil {
		return nil, err
	}
	stored = true
	return nil, nil
}

// update rewrites the pending records ks with f applied, in one durable
// batch (they stay pending); keys no longer pending are ignored. It
// returns how many it rewrote.
func (b *book) update(ctx context.Context, ks []rkey, f func(*Entry)) (int, error) {
	end, err := b.enter(true)
	if err != nil {
		return 0, err
	}
	defer end()
	b.mu.Lock()
	var next []*Entry
	for _, k := range ks {
		if cur, ok := b.pending[k]; ok {
			n := *cur
			f(&n)
			n.State = StatePending
			next = append(next, &n)
		}
	}
	b.mu.Unlock()
	puts := make([]kv, 0, len(next))
	for _, e := range next {
		v, err := encodeEntry(e)
		if err != nil {
			return 0, err
		}
		puts = append(puts, kv{entryKey(StatePending, keyOf(&e.Record)), v})
	}
	if len(puts) == 0 {
		return 0, nil
	}
	if err := b.st.write(ctx, puts, nil); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range next {
		b.pending[keyOf(&e.Record)] = e
	}
	return len(next), nil
}

// finish moves pending records to a final state, each with f applied
// (f sets State, Height, Code, Reason), in one durable batch; keys no
// longer pending are ignored. It returns the entries moved.
func (b *book) finish(ctx context.Context, ks []rkey, f func(int, *Entry)) ([]*Entry, error) {
	end, err := b.enter(true)
	if err != nil {
		return nil, err
	}
	defer end()
	b.mu.Lock()
	var moved []*Entry
	var movedKeys []rkey
	for i, k := range ks {
		cur, ok := b.pending[k]
		if !ok {
			continue
		}
		next := *cur
		f(i, &next)
		if next.State != StateSettled && next.State != StateSkipped {
			b.mu.Unlock()
			panic(fmt.Sprintf("settle: finish %s into %s", k, next.State))
		}
		moved, movedKeys = append(moved, &next), append(movedKeys, k)
	}
	b.mu.Unlock()
	if len(moved) == 0 {
		return nil, nil
	}
	puts := make([]kv, 0, len(moved))
	dels := make([]ds.Key, 0, len(moved))
	for i, e := range moved {
		v, err := encodeEntry(e)
		if err != nil {
			return nil, err
		}
		puts = append(puts, kv{entryKey(e.State, movedKeys[i]), v}, kv{timeKey(e.At, e.State, movedKeys[i]), []byte{}})
		dels = append(dels, entryKey(StatePending, movedKeys[i]))
	}
	if err := b.st.write(ctx, puts, dels); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, k := range movedKeys {
		if err := b.onPending(b.pending[k], false); err != nil {
			panic(fmt.Sprintf("settle: unindex %s: %v", k, err))
		}
		delete(b.pending, k)
		b.final[moved[i].State]++
	}
	return moved, nil
}

// snapshot returns the pending entries for which keep is true (all when
// keep is nil), under the lock; entries are immutable once published.
func (b *book) snapshot(keep func(*Entry) bool) []*Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*Entry, 0, len(b.pending))
	for _, e := range b.pending {
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// counts returns the number of records per state.
func (b *book) counts() (pending, settled, skipped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending), b.final[StateSettled], b.final[StateSkipped]
}

// records returns payer's records in every state, pending first, at most
// limit (0: no limit).
func (b *book) records(ctx context.Context, payer [32]byte, limit int) ([]*Entry, error) {
	end, err := b.enter(false)
	if err != nil {
		return nil, err
	}
	defer end()
	var out []*Entry
	for _, s := range []State{StatePending, StateSettled, StateSkipped} {
		prefix := statePrefix(s) + fmt.Sprintf("%x", payer[:]) + "/"
		err := b.st.scan(ctx, prefix, false, func(key string, val []byte) error {
			if limit > 0 && len(out) >= limit {
				return errStop
			}
			e, err := DecodeEntry(val)
			if err != nil {
				return fmt.Errorf("settle: read %s: %w", key, err)
			}
			out = append(out, e)
			return nil
		})
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

var errStop = errors.New("settle: stop scan")

// equalRecords reports whether a and b are the same signed record
// (receipt included).
func equalRecords(a, b *Entry) bool {
	x, err1 := encodeEntry(&Entry{Record: a.Record, State: StatePending})
	y, err2 := encodeEntry(&Entry{Record: b.Record, State: StatePending})
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// prune deletes up to limit final records whose At is before before,
// oldest first, with their time index; it returns how many it deleted.
// Pending records are never pruned.
func (b *book) prune(ctx context.Context, before int64, limit int) (int, error) {
	end, err := b.enter(true)
	if err != nil {
		return 0, err
	}
	defer end()
	var dels []ds.Key
	var states []State
	err = b.st.scan(ctx, timePrefix, true, func(key string, _ []byte) error {
		if len(states) >= limit {
			return errStop
		}
		at, st, k, err := parseTimeKey(key)
		if err != nil {
			return err
		}
		if at >= before {
			return errStop
		}
		dels = append(dels, ds.RawKey(key), entryKey(st, k))
		states = append(states, st)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	if len(dels) == 0 {
		return 0, nil
	}
	if err := b.st.write(ctx, nil, dels); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, st := range states {
		b.final[st]--
	}
	return len(states), nil
}

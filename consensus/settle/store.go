package settle

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/tenzrod/tenzrod/internal/pebbleopt"
)

// Key layout, one datastore per component directory:
//
//	/v1/<state letter>/<payer hex>/<digest hex>   an Entry (p pending, s settled, k skipped)
//	/v1/u/<settler hex>/<payer hex>/<digest hex>  8 bytes: an underpriced record's shortfall (collector)
//	/v1/t/<at: 16 hex>/<state letter>/<payer hex>/<digest hex>  empty: the time index of final records, for pruning
//
// (Datastore prefixes match whole path segments, so the payer is one.)
//
// A record lives under exactly one state prefix; moving it is one atomic
// batch (delete + put), so a crash leaves it in the old state or the new.
const root = "/v1/"

func stateLetter(s State) string {
	switch s {
	case StatePending:
		return "p"
	case StateSettled:
		return "s"
	case StateSkipped:
		return "k"
	}
	panic(fmt.Sprintf("settle: no key prefix for %s", s))
}

func entryKey(s State, k rkey) ds.Key {
	return ds.RawKey(root + stateLetter(s) + "/" + k.String())
}

func statePrefix(s State) string { return root + stateLetter(s) + "/" }

const timePrefix = root + "t/"

// timeKey indexes a final record by At (non-negative unix nanoseconds:
// fixed-width hex sorts as the numbers do).
func timeKey(at int64, s State, k rkey) ds.Key {
	return ds.RawKey(fmt.Sprintf("%s%016x/%s/%s", timePrefix, uint64(max(at, 0)), stateLetter(s), k))
}

// parseTimeKey inverts timeKey.
func parseTimeKey(key string) (int64, State, rkey, error) {
	var k rkey
	parts := strings.Split(strings.TrimPrefix(key, timePrefix), "/")
	bad := fmt.Errorf("settle: malformed time index key %q", key)
	if len(parts) != 4 || len(parts[0]) != 16 || len(parts[2]) != 64 || len(parts[3]) != 64 {
		return 0, 0, k, bad
	}
	at, err := strconv.ParseUint(parts[0], 16, 63)
	if err != nil {
		return 0, 0, k, bad
	}
	var st State
	switch parts[1] {
	case "s":
		st = StateSettled
	case "k":
		st = StateSkipped
	default:
		return 0, 0, k, bad
	}
	if _, err := hex.Decode(k[:32], []byte(parts[2])); err != nil {
		return 0, 0, k, bad
	}
	if _, err := hex.Decode(k[32:], []byte(parts[3])); err != nil {
		return 0, 0, k, bad
	}
	if timeKey(int64(at), st, k).String() != key {
		return 0, 0, k, bad // upper-case hex: not a key timeKey wrote
	}
	return int64(at), st, k, nil
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("settle: store closed")

// store is a pebble datastore whose every write is fsynced before it
// returns (pebble.Sync), so "stored" means "survives a crash".
type store struct {
	d *pebbleds.Datastore
}

func openStore(dir string) (*store, error) {
	d, err := pebbleds.NewDatastore(dir, pebbleds.WithPebbleOpts(pebbleopt.Store()), pebbleds.WithPebbleWriteOptions(pebble.Sync))
	if err != nil {
		return nil, fmt.Errorf("settle: open store %s: %w", dir, err)
	}
	return &store{d: d}, nil
}

func (s *store) close() error {
	if err := s.d.Close(); err != nil {
		return fmt.Errorf("settle: close store: %w", err)
	}
	return nil
}

// get returns the value at k, nil when absent.
func (s *store) get(ctx context.Context, k ds.Key) ([]byte, error) {
	v, err := s.d.Get(ctx, k)
	if errors.Is(err, ds.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settle: read %s: %w", k, err)
	}
	return v, nil
}

type kv struct {
	k ds.Key
	v []byte
}

// write applies puts and deletes atomically and durably.
func (s *store) write(ctx context.Context, puts []kv, dels []ds.Key) error {
	b, err := s.d.Batch(ctx)
	if err != nil {
		return fmt.Errorf("settle: write: %w", err)
	}
	for _, k := range dels {
		if err := b.Delete(ctx, k); err != nil {
			return fmt.Errorf("settle: write: delete %s: %w", k, err)
		}
	}
	for _, p := range puts {
		if err := b.Put(ctx, p.k, p.v); err != nil {
			return fmt.Errorf("settle: write: put %s: %w", p.k, err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		return fmt.Errorf("settle: write: commit: %w", err)
	}
	return nil
}

// scan calls fn for every key under prefix, in key order, with its value
// unless keysOnly.
func (s *store) scan(ctx context.Context, prefix string, keysOnly bool, fn func(key string, val []byte) error) error {
	res, err := s.d.Query(ctx, query.Query{Prefix: prefix, KeysOnly: keysOnly})
	if err != nil {
		return fmt.Errorf("settle: scan %s: %w", prefix, err)
	}
	defer res.Close() //nolint:errcheck // a read-only query: closing frees an iterator, nothing to lose
	for {
		r, ok := res.NextSync()
		if !ok {
			return nil
		}
		if r.Error != nil {
			return fmt.Errorf("settle: scan %s: %w", prefix, r.Error)
		}
		if err := fn(r.Key, r.Value); err != nil {
			return err
		}
	}
}

package buyerkeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/filecoin-project/go-clock"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/tenzrod/tenzrod/internal/pebbleopt"
)

// ErrClosed is returned by a closed store.
var ErrClosed = errors.New("buyerkeys: store closed")

// TokenPrefix starts every token the store makes.
const TokenPrefix = "sk-tenzro-"

// Store holds the keys, their billed spend and usage in a pebble
// datastore whose every write is synced, and the in-flight state
// (reservations, concurrency, rate) in memory. Safe for concurrent use.
type Store struct {
	mu sync.Mutex
	// dmu keeps d open while a bill is written outside mu (held for
	// reading); Close takes it to close d.
	dmu    sync.RWMutex
	d      ds.Batching
	clock  clock.Clock
	keys   map[string]*Key   // by ID
	byHash map[string]string // token SHA-256 (hex) → ID
	live   map[string]*live  // by ID
	closed bool
}

// live is a key's state in memory: its billed spend as stored, and what
// is in flight.
type live struct {
	wmu      sync.Mutex  // held while a bill of the key is written
	spend    spendRecord // written under wmu and mu
	reserved uint64
	inflight int
	recent   []time.Time // admissions in the last minute, oldest first
}

// Open opens (creating) the store in dir. Periods are read from clk.
func Open(dir string, clk clock.Clock) (*Store, error) {
	d, err := pebbleds.NewDatastore(dir, pebbleds.WithPebbleOpts(pebbleopt.Store()), pebbleds.WithPebbleWriteOptions(pebble.Sync))
	if err != nil {
		return nil, fmt.Errorf("buyerkeys: open %s: %w", dir, err)
	}
	s := &Store{d: d, clock: clk, keys: map[string]*Key{}, byHash: map[string]string{}, live: map[string]*live{}}
	if err := s.load(); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return s, nil
}

func keyKey(id string) ds.Key      { return ds.NewKey("/k/" + id) }
func spendKey(id string) ds.Key    { return ds.NewKey("/s/" + id) }
func billedKey(rd []byte) ds.Key   { return ds.NewKey("/b/" + hex.EncodeToString(rd)) }
func usagePrefix(id string) string { return "/u/" + id + "/" }

// load reads every key and its spend: a record that does not decode stops
// the open, since skipping it could forget a revocation or a spend.
func (s *Store) load() error {
	ctx := context.Background()
	res, err := s.d.Query(ctx, query.Query{Prefix: "/k/"})
	if err != nil {
		return fmt.Errorf("buyerkeys: load: %w", err)
	}
	entries, err := res.Rest()
	if err != nil {
		return fmt.Errorf("buyerkeys: load: %w", err)
	}
	for _, r := range entries {
		k, err := decodeKey(r.Value)
		if err != nil {
			return fmt.Errorf("buyerkeys: load %s: %w", r.Key, err)
		}
		lv := &live{}
		switch b, err := s.d.Get(ctx, spendKey(k.ID)); {
		case errors.Is(err, ds.ErrNotFound):
		case err != nil:
			return fmt.Errorf("buyerkeys: load spend of %s: %w", k.ID, err)
		default:
			sp, err := decodeSpend(b)
			if err != nil {
				return fmt.Errorf("buyerkeys: load spend of %s: %w", k.ID, err)
			}
			lv.spend = *sp
		}
		s.keys[k.ID], s.byHash[k.TokenSHA256], s.live[k.ID] = k, k.ID, lv
	}
	return nil
}

// Start is a no-op: the store is open from Open (node.Lifecycle).
func (s *Store) Start(context.Context) error { return nil }

// Stop closes the store.
func (s *Store) Stop(context.Context) error { return s.Close() }

// Close closes the datastore; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	was := s.closed
	s.closed = true
	s.mu.Unlock()
	if was {
		return nil
	}
	s.dmu.Lock() // the bills being written end first
	defer s.dmu.Unlock()
	if err := s.d.Close(); err != nil {
		return fmt.Errorf("buyerkeys: close: %w", err)
	}
	return nil
}

// Create stores a new key paying from payer and returns it with its
// token, which is shown only now.
func (s *Store) Create(payer string, set Settings) (*Key, string, error) {
	p, err := CheckPayer(payer)
	if err != nil {
		return nil, "", err
	}
	if err := set.Validate(); err != nil {
		return nil, "", err
	}
	var secret [20]byte
	var id [8]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, "", fmt.Errorf("buyerkeys: token: %w", err)
	}
	if _, err := rand.Read(id[:]); err != nil {
		return nil, "", fmt.Errorf("buyerkeys: id: %w", err)
	}
	token := TokenPrefix + hex.EncodeToString(secret[:])
	h := sha256.Sum256([]byte(token))
	k := &Key{Settings: set, ID: "key_" + hex.EncodeToString(id[:]), TokenSHA256: hex.EncodeToString(h[:]), Payer: p,
		CreatedMs: s.clock.Now().UnixMilli()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.putLocked(k); err != nil {
		return nil, "", err
	}
	s.keys[k.ID], s.byHash[k.TokenSHA256], s.live[k.ID] = k, k.ID, &live{}
	return k.clone(), token, nil
}

// Update replaces a key's settings; spend and in-flight calls stay.
func (s *Store) Update(id string, set Settings) (*Key, error) {
	if err := set.Validate(); err != nil {
		return nil, err
	}
	return s.change(id, func(k *Key) { k.Settings = set })
}

// Revoke marks a key revoked: its next request is refused.
func (s *Store) Revoke(id string) (*Key, error) {
	return s.change(id, func(k *Key) { k.Revoked = true })
}

func (s *Store) change(id string, f func(*Key)) (*Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.keys[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	k := old.clone()
	f(k)
	if err := s.putLocked(k); err != nil {
		return nil, err
	}
	s.keys[id] = k
	return k.clone(), nil
}

func (s *Store) putLocked(k *Key) error {
	if s.closed {
		return ErrClosed
	}
	b, err := encodeKey(k)
	if err != nil {
		return err
	}
	if err := s.d.Put(context.Background(), keyKey(k.ID), b); err != nil {
		return fmt.Errorf("buyerkeys: put key %s: %w", k.ID, err)
	}
	return nil
}

// Lookup returns the key whose token has SHA-256 hash (hex), revoked or
// not.
func (s *Store) Lookup(hash string) (*Key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byHash[hash]
	if !ok {
		return nil, false
	}
	return s.keys[id].clone(), true
}

// Get returns the key with id.
func (s *Store) Get(id string) (*Key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return nil, false
	}
	return k.clone(), true
}

// List returns every key, oldest first.
func (s *Store) List() []*Key {
	s.mu.Lock()
	out := make([]*Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, k.clone())
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedMs != out[j].CreatedMs {
			return out[i].CreatedMs < out[j].CreatedMs
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func (k *Key) clone() *Key {
	c := *k
	c.Models = append([]string(nil), k.Models...)
	c.Preferences = append([]byte(nil), k.Preferences...)
	return &c
}

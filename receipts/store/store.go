package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	ds "github.com/ipfs/go-datastore"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/tenzrod/tenzrod/internal/pebbleopt"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// Limits on what the store accepts.
const (
	MaxNonceLen      = 64
	MaxReasonLen     = 1 << 10 // longer reasons are truncated, never refused
	MaxMetaFieldLen  = 256     // ReceiptMeta.Provider and .Model
	MaxAccountLen    = receipt.MaxPayerLen
	MaxListLimit     = 1000
	maxReceiptRecord = receipt.MaxEnvelopeSize + 2*MaxMetaFieldLen + MaxReasonLen + 64
)

// Errors, wrapped with context.
var (
	ErrNotFound          = errors.New("store: not found")
	ErrDuplicate         = errors.New("store: payment for this request already recorded")
	ErrInsufficientFunds = errors.New("store: insufficient funds")
	ErrOverflow          = errors.New("store: balance overflow")
	ErrInvalid           = errors.New("store: invalid argument")
	ErrCorrupt           = errors.New("store: corrupt stored value")
	ErrClosed            = errors.New("store: closed")
)

const root = "/tenzro-receipts/v1"

// ReceiptMeta is what the gateway concluded about a stored receipt.
type ReceiptMeta struct {
	Verified bool   `cbor:"1,keyasint" json:"verified"`
	Reason   string `cbor:"2,keyasint" json:"reason,omitempty"` // why verification or Check failed
	Provider string `cbor:"3,keyasint" json:"provider"`         // provider peer ID (or name)
	Model    string `cbor:"4,keyasint" json:"model"`            // model name or hex ID
	TimeMs   int64  `cbor:"5,keyasint" json:"time_ms"`          // when the gateway received it
}

type receiptRecord struct {
	Envelope []byte      `cbor:"1,keyasint"`
	Meta     ReceiptMeta `cbor:"2,keyasint"`
}

// Store holds receipts, payment records and balances. It is safe for
// concurrent use.
type Store struct {
	mu      sync.RWMutex // writers and Close hold it exclusively
	d       ds.Batching
	owned   bool     // Close closes d
	flusher *flusher // nil: every write is synced (or d is not ours)
	closed  bool
}

// OpenWith opens (creating if needed) a pebble datastore in dir with the
// given durability and returns a Store that owns it.
func OpenWith(dir string, dur Durability) (*Store, error) {
	wo := pebble.NoSync
	switch dur {
	case GroupSync:
	case SyncEach:
		wo = pebble.Sync
	default:
		return nil, fmt.Errorf("store: open %s: %w: durability %d", dir, ErrInvalid, int(dur))
	}
	d, err := pebbleds.NewDatastore(dir, pebbleds.WithPebbleOpts(pebbleopt.Store()), pebbleds.WithPebbleWriteOptions(wo))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	s := &Store{d: d, owned: true}
	if dur == GroupSync {
		s.flusher = newFlusher(func(ctx context.Context) error { return d.Sync(ctx, ds.Key{}) })
	}
	return s, nil
}

// Close closes the store and its datastore. Further
// calls return ErrClosed; closing twice is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.flusher != nil {
		s.flusher.close()
	}
	if s.owned {
		if err := s.d.Close(); err != nil {
			return fmt.Errorf("store: close: %w", err)
		}
	}
	return nil
}

func key(kind string, parts ...string) ds.Key {
	k := root + "/" + kind
	for _, p := range parts {
		k += "/" + p
	}
	return ds.RawKey(k)
}

// rlock takes the read lock unless the store is closed.
func (s *Store) rlock() error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// lock takes the write lock unless the store is closed.
func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// PutReceipt stores the receipt envelope of the request with nonce, with
// what the gateway concluded about it. A later call for the same nonce
// replaces it. The envelope may be empty (the provider sent none); Reason
// is truncated to MaxReasonLen bytes.
func (s *Store) PutReceipt(nonce, envelope []byte, meta ReceiptMeta) error {
	k, b, err := encodeReceipt(nonce, envelope, meta)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.d.Put(context.Background(), k, b); err != nil {
		return fmt.Errorf("store: put receipt: %w", err)
	}
	s.wrote()
	return nil
}

// wrote notes an applied write for the flusher; the caller holds s.mu. It
// returns the write's sequence number for WaitDurable (0 when every write
// is synced as it is made).
func (s *Store) wrote() uint64 {
	if s.flusher == nil {
		return 0
	}
	return s.flusher.wrote()
}

// WaitDurable blocks until every write made before the call is on disk.
// Under SyncEach it returns at once.
func (s *Store) WaitDurable(ctx context.Context) error {
	if err := s.rlock(); err != nil {
		return err
	}
	f := s.flusher
	var n uint64
	if f != nil {
		n = f.wrote() // a no-op write marker: wait for a sync after now
	}
	s.mu.RUnlock()
	if f == nil {
		return nil
	}
	return f.wait(ctx, n)
}

// Unsynced is the number of applied writes not yet known to be on disk
// (always 0 under SyncEach).
func (s *Store) Unsynced() uint64 {
	if s.flusher == nil {
		return 0
	}
	return s.flusher.pending()
}

// encodeReceipt checks and encodes a receipt record and returns its key.
func encodeReceipt(nonce, envelope []byte, meta ReceiptMeta) (ds.Key, []byte, error) {
	if len(nonce) == 0 || len(nonce) > MaxNonceLen {
		return ds.Key{}, nil, fmt.Errorf("store: put receipt: %w: nonce is %d bytes, want 1..%d", ErrInvalid, len(nonce), MaxNonceLen)
	}
	if len(envelope) > receipt.MaxEnvelopeSize {
		return ds.Key{}, nil, fmt.Errorf("store: put receipt: %w: envelope of %d bytes exceeds %d", ErrInvalid, len(envelope), receipt.MaxEnvelopeSize)
	}
	for name, v := range map[string]string{"provider": meta.Provider, "model": meta.Model} {
		if len(v) > MaxMetaFieldLen || !utf8.ValidString(v) {
			return ds.Key{}, nil, fmt.Errorf("store: put receipt: %w: %s must be at most %d bytes of UTF-8", ErrInvalid, name, MaxMetaFieldLen)
		}
	}
	meta.Reason = truncate(meta.Reason, MaxReasonLen)
	b, err := cborx.Marshal(receiptRecord{Envelope: envelope, Meta: meta})
	if err != nil {
		return ds.Key{}, nil, fmt.Errorf("store: put receipt: %w", err)
	}
	return key("r", hex.EncodeToString(nonce)), b, nil
}

// GetReceipt returns the envelope and meta stored for nonce, or ErrNotFound.
func (s *Store) GetReceipt(nonce []byte) ([]byte, ReceiptMeta, error) {
	if err := s.rlock(); err != nil {
		return nil, ReceiptMeta{}, err
	}
	defer s.mu.RUnlock()
	b, err := s.get(key("r", hex.EncodeToString(nonce)))
	if err != nil {
		return nil, ReceiptMeta{}, fmt.Errorf("store: receipt %x: %w", nonce, err)
	}
	var rec receiptRecord
	if err := cborx.UnmarshalCanonical(b, maxReceiptRecord, &rec); err != nil {
		return nil, ReceiptMeta{}, fmt.Errorf("store: receipt %x: %w: %w", nonce, ErrCorrupt, err)
	}
	return rec.Envelope, rec.Meta, nil
}

// get reads a key, mapping the datastore's not-found to ErrNotFound.
func (s *Store) get(k ds.Key) ([]byte, error) {
	b, err := s.d.Get(context.Background(), k)
	if errors.Is(err, ds.ErrNotFound) {
		return nil, ErrNotFound
	}
	return b, err
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence,
// replacing invalid UTF-8 so the result always encodes.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

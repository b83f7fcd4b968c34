package store

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"

	"github.com/tenzrod/tenzrod/receipts/receipt"
)

func paymentKey(requestDigest []byte) ds.Key {
	return key("p", hex.EncodeToString(requestDigest))
}

// indexKey orders a payer's records by time, then request digest.
func indexKey(rec *receipt.Bill) ds.Key {
	// Flipping the sign bit of the two's-complement bits maps int64 onto
	// uint64 in order, so that hex keys sort as the times do.
	t := uint64(rec.TimeMs) ^ (1 << 63) //nolint:gosec // G115: a bit reinterpretation, on purpose
	return key("i", hex.EncodeToString([]byte(rec.Payer)), fmt.Sprintf("%016x-%x", t, rec.RequestDigest))
}

func balanceKey(account string) ds.Key {
	return key("b", hex.EncodeToString([]byte(account)))
}

func checkAccount(account string) error {
	if account == "" || len(account) > MaxAccountLen || !utf8.ValidString(account) {
		return fmt.Errorf("%w: account must be 1..%d bytes of UTF-8", ErrInvalid, MaxAccountLen)
	}
	return nil
}

// PutPayment stores a bill without touching balances (Settle
// debits and stores at once). A second record for the same request digest
// is ErrDuplicate.
func (s *Store) PutPayment(rec *receipt.Bill) error {
	return s.settle(rec, false, nil, nil)
}

// Settle debits rec.Price from rec.Payer and stores rec, atomically. It
// refuses a request digest already recorded (ErrDuplicate) and a payer
// whose balance is below the price (ErrInsufficientFunds); a refused
// Settle changes nothing.
func (s *Store) Settle(rec *receipt.Bill) error {
	return s.settle(rec, true, nil, nil)
}

// SettleWithReceipt is Settle that also stores the request's receipt in the
// same atomic write.
func (s *Store) SettleWithReceipt(rec *receipt.Bill, nonce, envelope []byte, meta ReceiptMeta) error {
	k, b, err := encodeReceipt(nonce, envelope, meta)
	if err != nil {
		return err
	}
	return s.settle(rec, true, &k, b)
}

func (s *Store) settle(rec *receipt.Bill, debit bool, rk *ds.Key, rb []byte) error {
	if rec == nil {
		return fmt.Errorf("store: settle: %w: nil record", ErrInvalid)
	}
	enc, err := rec.Marshal()
	if err != nil {
		return fmt.Errorf("store: settle: %w: %w", ErrInvalid, err)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	ctx := context.Background()
	pk := paymentKey(rec.RequestDigest)
	switch has, err := s.d.Has(ctx, pk); {
	case err != nil:
		return fmt.Errorf("store: settle: %w", err)
	case has:
		return fmt.Errorf("store: settle %x: %w", rec.RequestDigest, ErrDuplicate)
	}
	var bal uint64
	if debit {
		if bal, err = s.balance(rec.Payer); err != nil {
			return fmt.Errorf("store: settle: %w", err)
		}
		if bal < rec.Price {
			return fmt.Errorf("store: settle: %w: %q holds %d, price %d", ErrInsufficientFunds, rec.Payer, bal, rec.Price)
		}
	}
	b, err := s.d.Batch(ctx)
	if err != nil {
		return fmt.Errorf("store: settle: %w", err)
	}
	if debit {
		if err := b.Put(ctx, balanceKey(rec.Payer), encodeBalance(bal-rec.Price)); err != nil {
			return fmt.Errorf("store: settle: %w", err)
		}
	}
	if err := b.Put(ctx, pk, enc); err != nil {
		return fmt.Errorf("store: settle: %w", err)
	}
	if err := b.Put(ctx, indexKey(rec), nil); err != nil {
		return fmt.Errorf("store: settle: %w", err)
	}
	if rk != nil {
		if err := b.Put(ctx, *rk, rb); err != nil {
			return fmt.Errorf("store: settle: %w", err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		return fmt.Errorf("store: settle: commit: %w", err)
	}
	s.wrote()
	return nil
}

// GetPayment returns the record of a request digest, or ErrNotFound.
func (s *Store) GetPayment(requestDigest []byte) (*receipt.Bill, error) {
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.getPayment(requestDigest)
}

func (s *Store) getPayment(requestDigest []byte) (*receipt.Bill, error) {
	b, err := s.get(paymentKey(requestDigest))
	if err != nil {
		return nil, fmt.Errorf("store: payment %x: %w", requestDigest, err)
	}
	rec, err := receipt.UnmarshalBill(b)
	if err != nil {
		return nil, fmt.Errorf("store: payment %x: %w: %w", requestDigest, ErrCorrupt, err)
	}
	return rec, nil
}

// ListPayments returns payer's most recent records, at most limit of them
// (limit ≤ 0 or above MaxListLimit means MaxListLimit), oldest first.
func (s *Store) ListPayments(payer string, limit int) ([]*receipt.Bill, error) {
	if err := checkAccount(payer); err != nil {
		return nil, fmt.Errorf("store: list payments: %w", err)
	}
	if limit <= 0 || limit > MaxListLimit {
		limit = MaxListLimit
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	prefix := key("i", hex.EncodeToString([]byte(payer))).String()
	res, err := s.d.Query(context.Background(), query.Query{Prefix: prefix, KeysOnly: true, Limit: limit,
		Orders: []query.Order{query.OrderByKeyDescending{}}})
	if err != nil {
		return nil, fmt.Errorf("store: list payments: %w", err)
	}
	entries, err := res.Rest()
	if err != nil {
		return nil, fmt.Errorf("store: list payments: %w", err)
	}
	out := make([]*receipt.Bill, 0, len(entries))
	for _, e := range entries {
		name := ds.RawKey(e.Key).BaseNamespace()
		_, digestHex, ok := strings.Cut(name, "-")
		digest, err := hex.DecodeString(digestHex)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: list payments: %w: index key %q", ErrCorrupt, e.Key)
		}
		rec, err := s.getPayment(digest)
		if err != nil {
			return nil, fmt.Errorf("store: list payments: %w", err)
		}
		out = append(out, rec)
	}
	slices.Reverse(out)
	return out, nil
}

// Balance returns account's balance in micro-units (0 if never credited).
func (s *Store) Balance(account string) (uint64, error) {
	if err := checkAccount(account); err != nil {
		return 0, fmt.Errorf("store: balance: %w", err)
	}
	if err := s.rlock(); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	bal, err := s.balance(account)
	if err != nil {
		return 0, fmt.Errorf("store: balance: %w", err)
	}
	return bal, nil
}

// Credit adds amount to account's balance. It returns once the credit is
// on disk, whatever the durability: money coming in must not be lost.
func (s *Store) Credit(account string, amount uint64) error {
	n, err := s.adjust("credit", account, func(bal uint64) (uint64, error) {
		sum, carry := bits.Add64(bal, amount, 0)
		if carry != 0 {
			return 0, fmt.Errorf("%w: %d + %d", ErrOverflow, bal, amount)
		}
		return sum, nil
	})
	if err != nil || s.flusher == nil {
		return err
	}
	return s.flusher.wait(context.Background(), n)
}

// Debit subtracts amount from account's balance, or fails with
// ErrInsufficientFunds and changes nothing.
func (s *Store) Debit(account string, amount uint64) error {
	_, err := s.adjust("debit", account, func(bal uint64) (uint64, error) {
		if bal < amount {
			return 0, fmt.Errorf("%w: %q holds %d, debit %d", ErrInsufficientFunds, account, bal, amount)
		}
		return bal - amount, nil
	})
	return err
}

// adjust applies f to account's balance and returns the write's sequence
// number (see wrote).
func (s *Store) adjust(op, account string, f func(uint64) (uint64, error)) (uint64, error) {
	if err := checkAccount(account); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	bal, err := s.balance(account)
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	if bal, err = f(bal); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := s.d.Put(context.Background(), balanceKey(account), encodeBalance(bal)); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	return s.wrote(), nil
}

// balance reads a balance; the caller holds s.mu.
func (s *Store) balance(account string) (uint64, error) {
	b, err := s.get(balanceKey(account))
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case len(b) != 8:
		return 0, fmt.Errorf("%w: balance of %q is %d bytes", ErrCorrupt, account, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func encodeBalance(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

package buyerkeys

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// Billed counts a bill of the call: amount (micro-units) for the request
// with digest rd, served by provider with model. The spend, the day's
// usage and a mark of rd are written in one synced batch, so the spend is
// on disk before the buyer gets the answer and a bill counted once is
// never counted again (a second Billed of rd is a no-op). The amount
// replaces as much of the call's reservation.
func (c *Call) Billed(rd []byte, model, provider string, amount uint64) error {
	s := c.s
	// One key's bills are written in turn (each reads what the last
	// wrote); other keys' bills and admissions go on meanwhile, so the
	// synced writes of many keys share their fsyncs.
	s.mu.Lock()
	k, lv := s.keys[c.id], s.live[c.id]
	s.mu.Unlock()
	lv.wmu.Lock()
	defer lv.wmu.Unlock()
	s.dmu.RLock()
	defer s.dmu.RUnlock()
	s.mu.Lock()
	closed, sp := s.closed, lv.spend
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	ctx := context.Background()
	switch has, err := s.d.Has(ctx, billedKey(rd)); {
	case err != nil:
		return fmt.Errorf("buyerkeys: bill of %s: %w", c.id, err)
	case has:
		return nil
	}
	now := s.clock.Now()
	d, _ := ParsePeriod(k.BudgetDuration)
	if start, _ := periodOf(time.UnixMilli(k.CreatedMs), now, d); sp.PeriodStartMs != start.UnixMilli() {
		sp.PeriodStartMs, sp.Period = start.UnixMilli(), 0
	}
	var c1, c2, c3 uint64
	sp.Period, c1 = bits.Add64(sp.Period, amount, 0)
	sp.Total, c2 = bits.Add64(sp.Total, amount, 0)
	sp.Calls, c3 = bits.Add64(sp.Calls, 1, 0)
	if c1|c2|c3 != 0 {
		return fmt.Errorf("buyerkeys: bill of %s: spend overflow", c.id)
	}
	day := now.UTC().Format(time.DateOnly)
	uk := ds.NewKey(usagePrefix(c.id) + day)
	u := &DayUsage{Day: day}
	switch b, err := s.d.Get(ctx, uk); {
	case errors.Is(err, ds.ErrNotFound):
	case err != nil:
		return fmt.Errorf("buyerkeys: usage of %s: %w", c.id, err)
	default:
		if u, err = decodeUsage(b); err != nil {
			return fmt.Errorf("buyerkeys: usage of %s: %w", c.id, err)
		}
	}
	if err := u.add(model, provider, amount); err != nil {
		return err
	}
	if err := s.writeBill(ctx, c.id, rd, uk, &sp, u); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lv.spend = sp
	took := min(amount, c.reserved)
	c.reserved -= took
	lv.reserved -= took
	return nil
}

func (s *Store) writeBill(ctx context.Context, id string, rd []byte, uk ds.Key, sp *spendRecord, u *DayUsage) error {
	sb, err := cborx.Marshal(sp)
	if err != nil {
		return fmt.Errorf("buyerkeys: encode spend: %w", err)
	}
	ub, err := cborx.Marshal(u)
	if err != nil {
		return fmt.Errorf("buyerkeys: encode usage: %w", err)
	}
	b, err := s.d.Batch(ctx)
	if err != nil {
		return fmt.Errorf("buyerkeys: bill of %s: %w", id, err)
	}
	for _, kv := range []struct {
		k ds.Key
		v []byte
	}{{billedKey(rd), []byte(id)}, {spendKey(id), sb}, {uk, ub}} {
		if err := b.Put(ctx, kv.k, kv.v); err != nil {
			return fmt.Errorf("buyerkeys: bill of %s: %w", id, err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		return fmt.Errorf("buyerkeys: bill of %s: commit: %w", id, err)
	}
	return nil
}

// Status is a key's spend as its buyer sees it.
type Status struct {
	Key *Key `json:"key"`
	// Spent is the billed spend of the current period, Total of all time.
	Spent uint64 `json:"spent"`
	Total uint64 `json:"total"`
	Calls uint64 `json:"calls"`
	// Limit is the budget (0: none), Remaining what is left of it.
	Limit     uint64 `json:"limit,omitempty"`
	Remaining uint64 `json:"remaining,omitempty"`
	// Reserved is held by calls in flight.
	Reserved    uint64    `json:"reserved"`
	PeriodStart time.Time `json:"period_start"`
	Reset       time.Time `json:"reset,omitzero"`
}

// Status returns the key's spend now.
func (s *Store) Status(id string) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return Status{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	lv := s.live[id]
	now := s.clock.Now()
	spent, reset := s.spentLocked(k, lv, now)
	d, _ := ParsePeriod(k.BudgetDuration)
	start, _ := periodOf(time.UnixMilli(k.CreatedMs), now, d)
	st := Status{Key: k.clone(), Spent: spent, Total: lv.spend.Total, Calls: lv.spend.Calls, Limit: k.MaxBudget,
		Reserved: lv.reserved, PeriodStart: start, Reset: reset}
	if k.MaxBudget > spent {
		st.Remaining = k.MaxBudget - spent
	}
	return st, nil
}

// Usage returns the key's per-day usage, oldest first, at most days of
// them (the latest).
func (s *Store) Usage(id string, days int) ([]DayUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if _, ok := s.keys[id]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	res, err := s.d.Query(context.Background(), query.Query{Prefix: usagePrefix(id), Limit: days,
		Orders: []query.Order{query.OrderByKeyDescending{}}})
	if err != nil {
		return nil, fmt.Errorf("buyerkeys: usage of %s: %w", id, err)
	}
	entries, err := res.Rest()
	if err != nil {
		return nil, fmt.Errorf("buyerkeys: usage of %s: %w", id, err)
	}
	var out []DayUsage
	for _, r := range entries {
		u, err := decodeUsage(r.Value)
		if err != nil {
			return nil, fmt.Errorf("buyerkeys: usage of %s: %w", id, err)
		}
		out = append(out, *u)
	}
	slices.Reverse(out)
	return out, nil
}

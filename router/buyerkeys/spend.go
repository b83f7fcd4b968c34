package buyerkeys

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// Bounds of the usage a key keeps per day: the models and providers named
// beyond them are summed under Other.
const (
	maxTallies     = 128
	maxSpendRecord = 256
	maxUsageRecord = 2 * maxTallies * (MaxModelName + 32)
	// Other names the tally of what the per-day bounds left out.
	Other = "(other)"
)

// spendRecord is a key's billed spend: in the period starting at
// PeriodStartMs and in all.
type spendRecord struct {
	PeriodStartMs int64  `cbor:"1,keyasint" json:"period_start_ms"`
	Period        uint64 `cbor:"2,keyasint" json:"period"`
	Total         uint64 `cbor:"3,keyasint" json:"total"`
	Calls         uint64 `cbor:"4,keyasint" json:"calls"`
}

// Tally is an amount billed (micro-units) over a count of calls.
type Tally struct {
	Amount uint64 `cbor:"1,keyasint" json:"amount"`
	Calls  uint64 `cbor:"2,keyasint" json:"calls"`
}

// DayUsage is a key's billed calls of one UTC day, per model and per
// serving provider.
type DayUsage struct {
	Day       string           `cbor:"1,keyasint" json:"day"`
	Total     Tally            `cbor:"2,keyasint" json:"total"`
	Models    map[string]Tally `cbor:"3,keyasint,omitempty" json:"models,omitempty"`
	Providers map[string]Tally `cbor:"4,keyasint,omitempty" json:"providers,omitempty"`
}

// periodOf is the budget period holding now for a key created at created:
// periods are back to back from the key's creation. A key without a
// period has one, from its creation, that never ends (reset zero).
func periodOf(created, now time.Time, d time.Duration) (start, reset time.Time) {
	if d <= 0 {
		return created, time.Time{}
	}
	if now.Before(created) {
		return created, created.Add(d)
	}
	n := now.Sub(created) / d
	start = created.Add(n * d)
	return start, start.Add(d)
}

// add adds a bill to t, failing on overflow.
func (t *Tally) add(amount uint64) error {
	var c1, c2 uint64
	t.Amount, c1 = bits.Add64(t.Amount, amount, 0)
	t.Calls, c2 = bits.Add64(t.Calls, 1, 0)
	if c1|c2 != 0 {
		return fmt.Errorf("buyerkeys: usage overflow")
	}
	return nil
}

// addNamed adds a bill to m[name], or to m[Other] once m holds its bound.
func addNamed(m map[string]Tally, name string, amount uint64) error {
	if _, ok := m[name]; !ok && len(m) >= maxTallies-1 {
		name = Other
	}
	t := m[name]
	if err := t.add(amount); err != nil {
		return err
	}
	m[name] = t
	return nil
}

// add adds one bill to the day's usage.
func (u *DayUsage) add(model, provider string, amount uint64) error {
	if u.Models == nil {
		u.Models = map[string]Tally{}
	}
	if u.Providers == nil {
		u.Providers = map[string]Tally{}
	}
	if err := u.Total.add(amount); err != nil {
		return err
	}
	if err := addNamed(u.Models, model, amount); err != nil {
		return err
	}
	return addNamed(u.Providers, provider, amount)
}

func decodeSpend(b []byte) (*spendRecord, error) {
	return cborx.UnmarshalChecked(b, maxSpendRecord, ErrCorrupt, func(r *spendRecord) error {
		if r.Period > r.Total {
			return fmt.Errorf("%w: spend: period %d above total %d", ErrCorrupt, r.Period, r.Total)
		}
		return nil
	})
}

func decodeUsage(b []byte) (*DayUsage, error) {
	return cborx.UnmarshalChecked(b, maxUsageRecord, ErrCorrupt, func(u *DayUsage) error {
		if len(u.Models) > maxTallies || len(u.Providers) > maxTallies {
			return fmt.Errorf("%w: usage of %s: over %d names", ErrCorrupt, u.Day, maxTallies)
		}
		if _, err := time.Parse(time.DateOnly, u.Day); err != nil {
			return fmt.Errorf("%w: usage day %q", ErrCorrupt, u.Day)
		}
		return nil
	})
}

package buyerkeys

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
)

func openStore(t *testing.T, dir string, clk clock.Clock) *Store {
	t.Helper()
	s, err := Open(dir, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func hashOf(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func digest(i int) []byte {
	h := sha256.Sum256([]byte(fmt.Sprint("request ", i)))
	return h[:]
}

// call admits, reserves worst and bills price for request i.
func call(s *Store, token string, i int, worst, price uint64) error {
	c, _, ok, err := s.Admit(hashOf(token))
	if !ok {
		return errors.New("no such key")
	}
	if err != nil {
		return err
	}
	defer c.Done()
	if err := c.Reserve(worst); err != nil {
		return err
	}
	return c.Billed(digest(i), "tiny", "p1", price)
}

// TestKeysBudgetPeriodAndRestart: a budget admits exactly what it covers,
// concurrent calls included; refuses with the budget and the reset time;
// its spend survives a reopen and a bill counted twice counts once; after
// the period (an injected clock) the key is served again.
func TestKeysBudgetPeriodAndRestart(t *testing.T) {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	dir := filepath.Join(t.TempDir(), "keys")
	s := openStore(t, dir, clk)
	k, tok, err := s.Create("alice", Settings{Label: "ci", MaxBudget: 10_000, BudgetDuration: "1d"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, TokenPrefix) || k.TokenSHA256 != hashOf(tok) || strings.Contains(fmt.Sprint(k), tok) {
		t.Fatalf("key %+v, token %q", k, tok)
	}
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Go(func() { errs[i] = call(s, tok, i, 1_000, 1_000) })
	}
	wg.Wait()
	served := 0
	for _, err := range errs {
		var be *BudgetError
		switch {
		case err == nil:
			served++
		case !errors.As(err, &be):
			t.Fatalf("refusal %v, want a BudgetError", err)
		}
	}
	st, _ := s.Status(k.ID)
	if served != 10 || st.Spent != 10_000 || st.Reserved != 0 || st.Remaining != 0 {
		t.Fatalf("served %d, status %+v", served, st)
	}
	err = call(s, tok, 100, 1_000, 1_000)
	var be *BudgetError
	if !errors.As(err, &be) || !be.Reset.Equal(clk.Now().Add(24*time.Hour)) || !strings.Contains(err.Error(), "2026-12-04T10:00:00Z") ||
		!strings.Contains(err.Error(), "10000") {
		t.Fatalf("over budget: %v", err)
	}

	c, _, _, _ := s.Admit(hashOf(tok))
	if c != nil {
		t.Fatal("admitted over budget")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, clk)
	if st, _ := s.Status(k.ID); st.Spent != 10_000 || st.Calls != 10 {
		t.Fatalf("after reopen: %+v", st)
	}
	if err := call(s, tok, 101, 1_000, 1_000); !errors.As(err, &be) {
		t.Fatalf("after reopen: %v", err)
	}

	clk.Add(24*time.Hour - time.Millisecond)
	if err := call(s, tok, 102, 1_000, 1_000); !errors.As(err, &be) {
		t.Fatalf("a millisecond before the reset: %v", err)
	}
	clk.Add(time.Millisecond)
	for i := range 3 {
		// One request digest, as a bill replayed after a crash: counted once.
		if err := call(s, tok, 1_000, 1_000, 1_000); err != nil {
			t.Fatalf("new period, call %d: %v", i, err)
		}
	}
	st, _ = s.Status(k.ID)
	if st.Spent != 1_000 || st.Total != 11_000 || st.Calls != 11 {
		t.Fatalf("new period: %+v", st)
	}
	days, err := s.Usage(k.ID, 10)
	if err != nil || len(days) != 2 || days[0].Day != "2026-12-03" || days[0].Total != (Tally{Amount: 10_000, Calls: 10}) ||
		days[1].Models["tiny"] != (Tally{Amount: 1_000, Calls: 1}) || days[1].Providers["p1"].Amount != 1_000 {
		t.Fatalf("usage %+v, %v", days, err)
	}
}

// TestKeysReservationHeldInFlight: a call in flight holds its worst case
// (another is refused although nothing is spent) and releases it when
// done; a bill replaces as much of it.
func TestKeysReservationHeldInFlight(t *testing.T) {
	s := openStore(t, t.TempDir(), clock.NewMock())
	_, tok, err := s.Create("alice", Settings{MaxBudget: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	a, _, _, _ := s.Admit(hashOf(tok))
	if err := a.Reserve(700); err != nil {
		t.Fatal(err)
	}
	b, _, _, _ := s.Admit(hashOf(tok))
	var be *BudgetError
	if err := b.Reserve(400); !errors.As(err, &be) || be.Reserved != 700 || be.Worst != 400 || !be.Reset.IsZero() ||
		!strings.Contains(err.Error(), "never") {
		t.Fatalf("second call while 700 held: %v", err)
	}
	if err := a.Billed(digest(1), "m", "p", 500); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(a.Key()); st.Reserved != 200 || st.Spent != 500 {
		t.Fatalf("after the bill: %+v", st)
	}
	a.Done()
	a.Done() // twice: released once
	if err := b.Reserve(500); err != nil {
		t.Fatalf("after the first call ended: %v", err)
	}
	b.Done()
	if st, _ := s.Status(a.Key()); st.Reserved != 0 || st.Remaining != 500 {
		t.Fatalf("all done: %+v", st)
	}
}

// TestKeysRevokeLimitsAndSettings: revoke refuses the next admission;
// max_per_request, max_concurrent and rate_per_minute refuse; bad
// settings are refused with the field named.
func TestKeysRevokeLimitsAndSettings(t *testing.T) {
	clk := clock.NewMock()
	s := openStore(t, t.TempDir(), clk)
	k, tok, err := s.Create("alice", Settings{MaxPerRequest: 100, MaxConcurrent: 1, RatePerMinute: 2,
		Models: []string{"tiny"}, Preferences: json.RawMessage(`{"ignore":["p0"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, got, _, err := s.Admit(hashOf(tok))
	if err != nil || !got.Allows("tiny") || got.Allows("big") || string(got.Preferences) != `{"ignore":["p0"]}` {
		t.Fatalf("admit: %+v %v", got, err)
	}
	var be *BudgetError
	if err := a.Reserve(101); !errors.As(err, &be) || !be.PerRequest {
		t.Fatalf("over max_per_request: %v", err)
	}
	var le *LimitError
	if _, _, _, err := s.Admit(hashOf(tok)); !errors.As(err, &le) || !strings.Contains(err.Error(), "concurrent") {
		t.Fatalf("second concurrent call: %v", err)
	}
	a.Done()
	b, _, _, err := s.Admit(hashOf(tok))
	if err != nil {
		t.Fatal(err)
	}
	b.Done()
	if _, _, _, err := s.Admit(hashOf(tok)); !errors.As(err, &le) || le.RetryAfter != time.Minute {
		t.Fatalf("third call in a minute: %v", err)
	}
	clk.Add(time.Minute)
	if _, err := s.Revoke(k.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := s.Admit(hashOf(tok)); !ok || !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked: %v", err)
	}
	if _, _, ok, _ := s.Admit(hashOf("sk-other")); ok {
		t.Fatal("an unknown token is a key")
	}
	up, err := s.Update(k.ID, Settings{Label: "renamed"})
	if err != nil || up.Label != "renamed" || !up.Revoked || up.MaxPerRequest != 0 {
		t.Fatalf("update: %+v %v", up, err)
	}
	for _, c := range []struct {
		set  Settings
		want string
	}{
		{Settings{BudgetDuration: "1w"}, "budget_duration"},
		{Settings{BudgetDuration: "0d"}, "budget_duration"},
		{Settings{RatePerMinute: -1}, "rate_per_minute"},
		{Settings{Preferences: json.RawMessage(`[1]`)}, "preferences"},
		{Settings{Models: []string{""}}, "models"},
	} {
		if _, _, err := s.Create("alice", c.set); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.set, err)
		}
	}
	if _, _, err := s.Create("Not An Account", Settings{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad payer: %v", err)
	}
	if _, err := s.Revoke("key_0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	if n := len(s.List()); n != 1 {
		t.Fatalf("list: %d keys", n)
	}
}

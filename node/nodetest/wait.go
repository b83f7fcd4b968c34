package nodetest

import (
	"testing"
	"time"
)

// PollInterval is how often Eventually checks its condition.
const PollInterval = 100 * time.Millisecond

// Eventually polls cond every PollInterval until it holds, and fails the
// test naming what it waited for if d passes first. It is a wait for a
// state to be reached, never a timing assertion: d is generous.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(PollInterval)
	}
}

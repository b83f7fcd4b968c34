package validator

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// testMachine is a provider machine in dir whose certificate is valid from
// an hour ago to an hour on, closed when the test ends.
func testMachine(tb testing.TB, dir string) *ledgertest.Machine {
	tb.Helper()
	m, err := ledgertest.NewMachine(dir, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

package main

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// testMachine is a provider machine whose certificate is valid from an
// hour ago to an hour on, closed when the test ends.
func testMachine(t *testing.T) *ledgertest.Machine {
	t.Helper()
	return ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
}

package main

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// testMachine is a provider machine in dir whose certificate is valid from
// an hour ago to an hour on, closed when the test ends.
func testMachine(t *testing.T, dir string) *ledgertest.Machine {
	t.Helper()
	m, err := ledgertest.NewMachine(dir, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

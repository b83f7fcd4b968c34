package main

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// testMachine is a provider machine in dir whose certificate is valid from
// an hour ago to an hour on, closed when the test ends.
func testMachine(t *testing.T, dir string) *testnet.Machine {
	t.Helper()
	m, err := testnet.NewMachine(dir, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

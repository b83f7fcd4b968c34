//go:build race

package node

// raceScale stretches the fault tests' routing timeouts: under the race
// detector the embedded engine runs about twenty times slower, and a
// first-token timeout sized for the plain build would fail it over.
const raceScale = 5

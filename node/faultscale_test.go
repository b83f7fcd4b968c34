//go:build !race

package node

// raceScale stretches the fault tests' routing timeouts under the race
// detector (see faultscale_race_test.go); 1 without it.
const raceScale = 1

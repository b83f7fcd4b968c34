//go:build race

package ledger_test

// planProperties is how many random plans TestPlanProperty runs under the
// race detector: 10^5 there take about 80 s (10^4 about 12 s) on two cores; the plain test
// run covers 10^5.
const planProperties = 10_000

//go:build !race

package ledger_test

// planProperties is how many random plans TestPlanProperty runs.
const planProperties = 100_000

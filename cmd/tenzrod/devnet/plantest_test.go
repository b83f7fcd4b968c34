package devnet

import "testing"

// testPlan completes o as a fresh devnet of software keys in a temporary
// directory, checks that it validates, and writes its plan there.
func testPlan(t *testing.T, o Options) (Options, []nodePlan, chainInfo) {
	t.Helper()
	o.Dir, o.Binary, o.KeyBackend, o.Fresh = t.TempDir(), "tenzrod", "software", true
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	plans, chain, err := plan(o, "sk-tenzro-plan")
	if err != nil {
		t.Fatal(err)
	}
	return o, plans, chain
}

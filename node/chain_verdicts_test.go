package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// TestSLAVerdictsLand: with a 3-second chain hour, the validator observes
// the registered provider up, its verdicts commit, and the provider's
// standing counts the available hours above the bonded component.
func TestSLAVerdictsLand(t *testing.T) {
	params := testChainParams(3)
	c := newChainNet(t, 1, 1, 0, params)
	gw, reg := c.validators[0], c.registered[0]
	m := reg.Identity().MachineID()
	nodetest.Eventually(t, 90*time.Second, "two available hours in the provider's standing", func() bool {
		st, err := gw.Chain().Standing(t.Context(), m, 0)
		return err == nil && st.AvailableHours >= 2
	})
	st, err := gw.Chain().Standing(t.Context(), m, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := params.StandingBondedBP + params.StandingAvailBP*st.AvailableHours/st.WindowHours
	if st.StandingBP != want || st.StandingBP <= params.StandingBondedBP {
		t.Fatalf("standing %d, want %d (inputs %+v)", st.StandingBP, want, st)
	}
	for _, h := range st.Hours {
		if h.Available && (h.Tally.AvailablePower == 0 || h.Tally.UnavailablePower != 0) {
			t.Fatalf("available hour %d with tally %+v", h.Hour, h.Tally)
		}
	}
}

package ledger_test

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// standing computes a provider's standing from the committed state.
func (c *chain) standing(m *machine) ledger.Standing {
	c.T.Helper()
	var st ledger.Standing
	err := c.l.ViewAt(0, func(t *trie.Trie, at ledger.Stamp) error {
		var err error
		st, err = ledger.ComputeStanding(ledger.NewTrieKV(t), m.machineID(), at)
		return err
	})
	if err != nil {
		c.T.Fatal(err)
	}
	return st
}

// TestStandingFormula: 4 validators, window 6 hours at hour 10. Hours 4
// (nobody available) and 5 (2 of 4 say available: not > 2/3) count as
// unavailable, hour 6 has 3 of 4 (available), 7-9 all available: standing
// = 3000 + 7000 × 4 / 6 = 7666 bp.
func TestStandingFormula(t *testing.T) {
	op, gop := ledgertest.Signer(testChain, "operator", 5000)
	outsider, gout := ledgertest.Signer(testChain, "outsider", 10)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 4, gop, gout)
	p := newMachine(t)
	c.mustApply(c.SignAt(op, 0, p.register(t, op, 1000, 60)))
	c.Now = genesisTime.Add(10*time.Hour + 5*time.Minute)
	c.block()
	votes := map[uint64][]bool{
		4: {false, false, false, false},
		5: {true, true, false, false},
		6: {true, true, true, false},
		7: {true, true, true, true},
		8: {true, true, true, true},
		9: {true, true, true, true},
	}
	var txs [][]byte
	nonce := make([]uint64, 4)
	for h := uint64(4); h <= 9; h++ {
		for v, avail := range votes[h] {
			txs = append(txs, c.SignAt(c.Vals[v], nonce[v], &ledger.SLAVerdict{MachineID: p.machineID(), Hour: h, Available: avail}))
			nonce[v]++
		}
	}
	c.mustApply(txs...)
	st := c.standing(p)
	if st.CurrentHour != 10 || st.WindowHours != 6 || len(st.Hours) != 6 || st.Hours[0].Hour != 4 {
		t.Fatalf("window = hour %d, %d hours %+v", st.CurrentHour, st.WindowHours, st.Hours)
	}
	if st.AvailableHours != 4 || st.StandingBP != 3000+7000*4/6 || !st.BondLive {
		t.Fatalf("standing = %+v, want 4 available hours and %d bp", st, 3000+7000*4/6)
	}
	q := newMachine(t)
	wantCodes(t, c, [][]byte{
		c.SignAt(c.Vals[0], nonce[0], &ledger.SLAVerdict{MachineID: p.machineID(), Hour: 9, Available: false}),
		c.SignAt(c.Vals[0], nonce[0], &ledger.SLAVerdict{MachineID: p.machineID(), Hour: 11, Available: true}),
		c.SignAt(c.Vals[0], nonce[0], &ledger.SLAVerdict{MachineID: p.machineID(), Hour: 3, Available: true}),
		c.SignAt(c.Vals[0], nonce[0], &ledger.SLAVerdict{MachineID: q.machineID(), Hour: 9, Available: true}),
		c.SignAt(outsider, 0, &ledger.SLAVerdict{MachineID: p.machineID(), Hour: 9, Available: true}),
	}, ledger.CodeAlreadyVoted, ledger.CodeBadHour, ledger.CodeBadHour, ledger.CodeUnknownProvider, ledger.CodeNotValidator)
	// An hour later the window slides: hour 4 leaves, hour 10 (no verdicts) enters.
	c.Now = genesisTime.Add(11*time.Hour + time.Minute)
	c.block()
	if st := c.standing(p); st.AvailableHours != 4 || st.Hours[0].Hour != 5 {
		t.Fatalf("after the window slid: %+v", st)
	}
}

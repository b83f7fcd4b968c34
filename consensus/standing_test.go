package consensus_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// standing queries a provider's standing and verifies every proof op.
func (c *chain) standing(p *testnet.Provider) consensus.Standing {
	c.t.Helper()
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "standing/" + p.MachineID.String()})
	if err != nil || res.Code != 0 {
		c.t.Fatalf("standing: %v %s", err, res.GetLog())
	}
	for _, op := range res.ProofOps.Ops {
		if _, _, err := consensus.VerifyProofOp(c.app.AppHash(), op); err != nil {
			c.t.Fatal(err)
		}
	}
	var s consensus.Standing
	if err := json.Unmarshal(res.Value, &s); err != nil {
		c.t.Fatal(err)
	}
	return s
}

// TestStandingFormula: 4 validators, window 6 hours at hour 10. Hours 4
// (nobody available) and 5 (2 of 4 say available: not > 2/3) count as
// unavailable, hour 6 has 3 of 4 (available), 7-9 all available: standing
// = 3000 + 7000 × 4 / 6 = 7666 bp.
func TestStandingFormula(t *testing.T) {
	op, gop := signer("operator", 5000)
	outsider, gout := signer("outsider", 10)
	c := newChain(t, "", genesisTime, testParams(), 4, gop, gout)
	p := newProvider(t)
	c.mustApply(c.signAt(op, 0, p.Register(1000, 60)))
	c.now = genesisTime.Add(10*time.Hour + 5*time.Minute)
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
			txs = append(txs, c.signAt(c.vals[v], nonce[v], &consensus.SLAVerdict{MachineID: p.MachineID, Hour: h, Available: avail}))
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
	q := newProvider(t)
	wantCodes(t, c, [][]byte{
		c.signAt(c.vals[0], nonce[0], &consensus.SLAVerdict{MachineID: p.MachineID, Hour: 9, Available: false}),
		c.signAt(c.vals[0], nonce[0], &consensus.SLAVerdict{MachineID: p.MachineID, Hour: 11, Available: true}),
		c.signAt(c.vals[0], nonce[0], &consensus.SLAVerdict{MachineID: p.MachineID, Hour: 3, Available: true}),
		c.signAt(c.vals[0], nonce[0], &consensus.SLAVerdict{MachineID: q.MachineID, Hour: 9, Available: true}),
		c.signAt(outsider, 0, &consensus.SLAVerdict{MachineID: p.MachineID, Hour: 9, Available: true}),
	}, consensus.CodeAlreadyVoted, consensus.CodeBadHour, consensus.CodeBadHour, consensus.CodeUnknownProvider, consensus.CodeNotValidator)
	// An hour later the window slides: hour 4 leaves, hour 10 (no verdicts) enters.
	c.now = genesisTime.Add(11*time.Hour + time.Minute)
	c.block()
	if st := c.standing(p); st.AvailableHours != 4 || st.Hours[0].Hour != 5 {
		t.Fatalf("after the window slid: %+v", st)
	}
}

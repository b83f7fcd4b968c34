package consensus_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// providerRange queries machine m's records at from..to in the latest
// state.
func (c *chain) providerRange(m identity.MachineID, from, to int64) consensus.ProviderRecordRange {
	return queryRecords(c, "providerrange", m, from, to)
}

// TestProviderRecordRangeProofs settles records of two payers to two
// machines and checks that a machine's range lists exactly its records of
// every payer, verifies against the app hash, and that dropping, altering
// or re-attributing a record fails verification. It also lists a payer's
// escrows, one per settler.
func TestProviderRecordRangeProofs(t *testing.T) {
	c, p, alice, bob, op := newMarket(t)
	gw, _ := ledgertest.Signer(testChain, "gateway", 0)
	q := newMachine(t)
	c.mustApply(c.sign(op, q.register(t, op.Account())), c.sign(alice, &ledger.EscrowFund{Amount: 50, Settler: gw.Account()}))
	n := byte(0)
	settle := func(s *ledger.Signer, m *machine, k int) []byte {
		recs := make([]receipt.PaymentRecord, k)
		for i := range recs {
			n++
			recs[i] = m.record(t, s, terms.Hash32{n}, uint64(n))
		}
		return c.sign(s, &ledger.Settlement{Records: recs})
	}
	c.mustApply(settle(alice, p, 2), settle(bob, q, 1))
	h1 := c.app.Height()
	c.mustApply(settle(bob, p, 2))
	h2 := c.app.Height()
	root := c.app.AppHash()

	for _, tc := range []struct {
		m        identity.MachineID
		from, to int64
		want     int
	}{{p.MachineID(), h1, h2, 4}, {p.MachineID(), h2, h2, 2}, {q.MachineID(), 1, h2, 1}, {q.MachineID(), h2, h2, 0}} {
		pr := c.providerRange(tc.m, tc.from, tc.to)
		if err := consensus.VerifyRecordRange(root, pr); err != nil {
			t.Fatalf("%s %d..%d: %v", tc.m, tc.from, tc.to, err)
		}
		if len(pr.Records) != tc.want {
			t.Fatalf("%s %d..%d: %d records, want %d", tc.m, tc.from, tc.to, len(pr.Records), tc.want)
		}
		for _, sr := range pr.Records {
			if sr.Record.Provider != tc.m || sr.Height < tc.from || sr.Height > tc.to {
				t.Fatalf("%s %d..%d: record %+v", tc.m, tc.from, tc.to, sr)
			}
		}
	}
	pr := c.providerRange(p.MachineID(), h1, h2)
	cut := func(f func(*consensus.ProviderRecordRange)) consensus.ProviderRecordRange {
		cp := pr
		cp.Records = append([]ledger.SettledRecord(nil), pr.Records...)
		f(&cp)
		return cp
	}
	for name, bad := range map[string]consensus.ProviderRecordRange{
		"record dropped": cut(func(r *consensus.ProviderRecordRange) { r.Records = r.Records[:3] }),
		"price changed":  cut(func(r *consensus.ProviderRecordRange) { r.Records[0].Record.Price++ }),
		"other machine":  cut(func(r *consensus.ProviderRecordRange) { r.Owner = q.MachineID() }),
		"other span":     cut(func(r *consensus.ProviderRecordRange) { r.From = h2 }),
	} {
		if err := consensus.VerifyRecordRange(root, bad); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if err := consensus.VerifyRecordRange(root, cut(func(r *consensus.ProviderRecordRange) { r.Records[1].Record.Price++ })); !errors.Is(err, consensus.ErrRecordMismatch) {
		t.Errorf("altered record: %v, want ErrRecordMismatch", err)
	}
	// The payer index is unaffected by the provider index after it.
	if rr := c.recordRange(bob.Account(), 1, h2); len(rr.Records) != 3 || consensus.VerifyRecordRange(root, rr) != nil {
		t.Fatalf("bob: %d records, want 3", len(rr.Records))
	}

	var es []ledger.Escrow
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "escrows/" + alice.Account().String()})
	if err != nil || res.Code != 0 {
		t.Fatalf("escrows: %v %s", err, res.GetLog())
	}
	if err := json.Unmarshal(res.Value, &es); err != nil || len(es) != 2 || len(res.ProofOps.Ops) != 2 {
		t.Fatalf("alice's escrows %+v (%v), want 2, each with its proof", es, err)
	}
	for i, op := range res.ProofOps.Ops {
		if _, v, err := consensus.VerifyProofOp(root, op); err != nil || len(v) == 0 {
			t.Fatalf("escrow %d proof: %v", i, err)
		}
	}
	var e ledger.Escrow
	if !c.query("escrow/"+alice.Account().String()+"/"+gw.Account().String(), &e) || e.Balance != 50 || e.Settler != gw.Account() {
		t.Fatalf("escrow (alice, gateway) = %+v", e)
	}
}

package consensus_test

import (
	"context"
	"encoding/json"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestQueriesProve: the peer index (raw) and a provider's standing
// (computed) answer through ABCI Query with proofs that verify against the
// app hash.
func TestQueriesProve(t *testing.T) {
	c, p, op := newProviderChain(t)
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "peer/" + p.PeerID.String()})
	if err != nil || res.Code != 0 || string(res.Value) != string(p.MachineID[:]) {
		t.Fatalf("peer query: %v %d %x, want %s", err, res.GetCode(), res.GetValue(), p.MachineID)
	}
	if err := consensus.VerifyQuery(c.app.AppHash(), res.Value, res.ProofOps.Ops); err != nil {
		t.Fatalf("peer query proof: %v", err)
	}
	res, err = c.app.Query(context.Background(), &abci.QueryRequest{Path: "standing/" + p.MachineID.String()})
	if err != nil || res.Code != 0 {
		t.Fatalf("standing: %v %s", err, res.GetLog())
	}
	if len(res.ProofOps.Ops) < 3 {
		t.Fatalf("standing has %d proof ops, want provider, params and meta at least", len(res.ProofOps.Ops))
	}
	for _, op := range res.ProofOps.Ops {
		if _, _, err := consensus.VerifyProofOp(c.app.AppHash(), op); err != nil {
			t.Fatal(err)
		}
	}
	var st ledger.Standing
	if err := json.Unmarshal(res.Value, &st); err != nil || !st.BondLive || st.MachineID != p.MachineID {
		t.Fatalf("standing %+v, %v", st, err)
	}
	// Name records: raw with a proof, listed with one proof op per record.
	c.mustApply(c.sign(op, &ledger.NameBind{Name: "tenzro-devnet", ModelID: terms.Hash32{7}, MachineID: p.MachineID}))
	var rec ledger.NameRecord
	if !c.query("name/tenzro-devnet", &rec) || rec.ModelID != (terms.Hash32{7}) || rec.Operator != op.Account() {
		t.Fatalf("name record %+v", rec)
	}
	if c.query("name/unbound", &rec) {
		t.Fatal("unbound name has a record")
	}
	res, err = c.app.Query(context.Background(), &abci.QueryRequest{Path: "names"})
	var names []ledger.NameRecord
	if err != nil || res.Code != 0 || json.Unmarshal(res.Value, &names) != nil || len(names) != 1 || len(res.ProofOps.Ops) != 1 {
		t.Fatalf("names: %v %s %+v", err, res.GetLog(), names)
	}
	if _, v, err := consensus.VerifyProofOp(c.app.AppHash(), res.ProofOps.Ops[0]); err != nil || len(v) == 0 {
		t.Fatalf("names proof: %v", err)
	}
	res, err = c.app.Query(context.Background(), &abci.QueryRequest{Path: "name/has space"})
	if err != nil || ledger.Code(res.Code) != ledger.CodeMalformed {
		t.Fatalf("bad name path: %v code %d, want malformed", err, res.GetCode())
	}
	res, err = c.app.Query(context.Background(), &abci.QueryRequest{Path: "nope/1"})
	if err != nil || ledger.Code(res.Code) != ledger.CodeMalformed {
		t.Fatalf("unknown path: %v code %d, want malformed", err, res.GetCode())
	}
}

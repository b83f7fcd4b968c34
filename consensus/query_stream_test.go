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

// TestStreamQueries: stream/<id> answers a stream, open or closed, with a
// proof; streams/<payer> lists exactly the payer's open streams, each
// index entry and stream with a proof that verifies against the app hash.
func TestStreamQueries(t *testing.T) {
	c, m, alice, bob, op := newMarket(t)
	open := func(s *ledger.Signer, deposit uint64) terms.Hash32 {
		nonce := c.account(s.Account()).Nonce
		res := c.mustApply(c.sign(s, &ledger.StreamOpen{Payee: m.MachineID(), Rate: 3600, Deposit: deposit}))
		id := ledger.StreamID(s.Account(), nonce, s.Account(), s.Account(), m.MachineID())
		if string(res.TxResults[0].Data) != string(id[:]) {
			t.Fatalf("open's data %x, want %s", res.TxResults[0].Data, id)
		}
		return id
	}
	a1, a2, b1 := open(alice, 100), open(alice, 200), open(bob, 300)
	c.mustApply(c.sign(alice, &ledger.StreamStop{ID: a1}))

	var s ledger.Stream
	if !c.query("stream/"+a1.String(), &s) || !s.Closed || s.Deposit != 100 || s.Claimed+s.Refunded != 100 {
		t.Fatalf("stopped stream %+v", s)
	}
	if c.query("stream/"+terms.Hash32{9}.String(), &s) {
		t.Fatal("an unknown stream answered")
	}
	list := func(payer terms.AccountID) []ledger.Stream {
		res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "streams/" + payer.String()})
		if err != nil || res.Code != 0 {
			t.Fatalf("streams: %v %s", err, res.GetLog())
		}
		var ss []ledger.Stream
		if err := json.Unmarshal(res.Value, &ss); err != nil {
			t.Fatal(err)
		}
		if len(res.ProofOps.Ops) != 2*len(ss) {
			t.Fatalf("%d streams with %d proof ops, want an index entry and a stream each", len(ss), len(res.ProofOps.Ops))
		}
		for i, op := range res.ProofOps.Ops {
			if _, v, err := consensus.VerifyProofOp(c.app.AppHash(), op); err != nil || len(v) == 0 {
				t.Fatalf("proof %d: %v", i, err)
			}
		}
		return ss
	}
	if ss := list(alice.Account()); len(ss) != 1 || ss[0].ID != a2 || ss[0].Deposit != 200 {
		t.Fatalf("alice's open streams %+v, want only %s", ss, a2)
	}
	if ss := list(bob.Account()); len(ss) != 1 || ss[0].ID != b1 {
		t.Fatalf("bob's open streams %+v, want only %s", ss, b1)
	}
	if ss := list(op.Account()); len(ss) != 0 {
		t.Fatalf("the operator pays no stream, listed %+v", ss)
	}
	for _, bad := range []string{"stream/zz", "streams/12"} {
		res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: bad})
		if err != nil || res.Code != uint32(ledger.CodeMalformed) {
			t.Fatalf("%s: %v code %d, want malformed", bad, err, res.GetCode())
		}
	}
}

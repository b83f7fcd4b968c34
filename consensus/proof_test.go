package consensus_test

import (
	"bytes"
	"context"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func TestProofsVerifyAndTamperFails(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 1000)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	c.mustApply(c.sign(alice, &ledger.Transfer{To: bob.Account(), Amount: 5}))
	root := c.app.AppHash()
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "account/" + alice.Account().String()})
	if err != nil || res.Code != 0 {
		t.Fatal(err, res.GetLog())
	}
	ops := res.ProofOps.Ops
	if err := consensus.VerifyQuery(root, res.Value, ops); err != nil {
		t.Fatalf("valid proof: %v", err)
	}
	if !bytes.Equal(ops[0].Key, ledger.KeyAccount(alice.Account())) {
		t.Fatalf("proof key %x", ops[0].Key)
	}

	forged, _ := cborx.Marshal(ledger.Account{Balance: 1_000_000, Nonce: 1})
	if consensus.VerifyQuery(root, forged, ops) == nil {
		t.Error("tampered value verified")
	}
	badRoot := bytes.Clone(root)
	badRoot[0] ^= 1
	if consensus.VerifyQuery(badRoot, res.Value, ops) == nil {
		t.Error("proof verified against another root")
	}
	var p consensus.Proof
	if err := cborx.UnmarshalCanonical(ops[0].Data, consensus.MaxProofBytes, &p); err != nil {
		t.Fatal(err)
	}
	for i := range p.Nodes {
		q := consensus.Proof{Nodes: make([][]byte, len(p.Nodes))}
		for j := range p.Nodes {
			q.Nodes[j] = bytes.Clone(p.Nodes[j])
		}
		q.Nodes[i][len(q.Nodes[i])-1] ^= 1
		data, _ := cborx.Marshal(q)
		tampered := ops[0]
		tampered.Data = data
		if consensus.VerifyQuery(root, res.Value, []cmtcrypto.ProofOp{tampered}) == nil {
			t.Errorf("proof with node %d altered verified", i)
		}
	}
	otherKey := ops[0]
	otherKey.Key = ledger.KeyAccount(bob.Account())
	if consensus.VerifyQuery(root, res.Value, []cmtcrypto.ProofOp{otherKey}) == nil {
		t.Error("proof verified for another key")
	}

	// Absence: an account that never existed is proven absent.
	stranger, _ := ledgertest.Signer(testChain, "stranger", 0)
	res, err = c.app.Query(context.Background(), &abci.QueryRequest{Path: "account/" + stranger.Account().String()})
	if err != nil || res.Code != 0 || len(res.Value) != 0 {
		t.Fatalf("absent account: %v %d %x", err, res.GetCode(), res.GetValue())
	}
	if err := consensus.VerifyQuery(root, nil, res.ProofOps.Ops); err != nil {
		t.Fatalf("absence proof: %v", err)
	}
	if consensus.VerifyQuery(root, forged, res.ProofOps.Ops) == nil {
		t.Error("absence proof accepted a value")
	}
}

func TestQueryAtPastHeight(t *testing.T) {
	alice, ga := ledgertest.Signer(testChain, "alice", 1000)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	c.mustApply(c.sign(alice, &ledger.Transfer{To: bob.Account(), Amount: 5}))
	h, oldRoot := c.app.Height(), c.app.AppHash()
	c.mustApply(c.sign(alice, &ledger.Transfer{To: bob.Account(), Amount: 7}))
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "account/" + bob.Account().String(), Height: h})
	if err != nil || res.Code != 0 || res.Height != h {
		t.Fatal(err, res.GetLog())
	}
	var a ledger.Account
	if err := cborx.UnmarshalCanonical(res.Value, 1024, &a); err != nil || a.Balance != 5 {
		t.Fatalf("bob at height %d = %+v %v, want 5", h, a, err)
	}
	if err := consensus.VerifyQuery(oldRoot, res.Value, res.ProofOps.Ops); err != nil {
		t.Fatal(err)
	}
	res, _ = c.app.Query(context.Background(), &abci.QueryRequest{Path: "account/zz"})
	if ledger.Code(res.Code) != ledger.CodeMalformed {
		t.Fatalf("bad path: code %d", res.Code)
	}
}

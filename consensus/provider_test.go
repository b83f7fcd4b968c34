package consensus_test

import (
	"context"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

func newProvider(t *testing.T) *testnet.Provider {
	t.Helper()
	p, err := testnet.NewProvider()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func wantCodes(t *testing.T, c *chain, txs [][]byte, want ...consensus.Code) {
	t.Helper()
	res := c.block(txs...)
	for i, w := range want {
		if got := consensus.Code(res.TxResults[i].Code); got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.TxResults[i].Log, w)
		}
	}
}

func TestRegistrationChecks(t *testing.T) {
	op, gop := signer("operator", 10_000)
	c := newChain(t, "", genesisTime, testParams(), 1, gop)
	p, q := newProvider(t), newProvider(t)
	mismatched := p.Register(1000, 60)
	mismatched.PQPub = q.PQPub
	badPeer := q.Register(1000, 60)
	badPeer.PeerID = "not-a-peer-id"
	wantCodes(t, c, [][]byte{
		c.signAt(op, 0, p.Register(999, 60)),
		c.signAt(op, 0, mismatched),
		c.signAt(op, 0, badPeer),
	}, consensus.CodeBondTooLow, consensus.CodeBadIdentity, consensus.CodeBadIdentity)
	c.mustApply(c.signAt(op, 0, p.Register(1000, 60)))
	samePeer := q.Register(1000, 60)
	samePeer.PeerID = p.PeerID.String()
	wantCodes(t, c, [][]byte{
		c.signAt(op, 1, p.Register(1000, 60)),
		c.signAt(op, 1, samePeer),
		c.signAt(op, 1, q.Register(20_000, 60)),
	}, consensus.CodeDuplicate, consensus.CodeDuplicate, consensus.CodeOverdraft)
	var got consensus.Provider
	if !c.query("provider/"+p.MachineID.String(), &got) || got.Operator != op.Account() || got.Bond != 1000 || got.PeerID != p.PeerID.String() {
		t.Fatalf("registration = %+v", got)
	}
	// The peer index answers which machine a peer ID is registered to, with a proof.
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: "peer/" + p.PeerID.String()})
	if err != nil || res.Code != 0 || string(res.Value) != string(p.MachineID[:]) {
		t.Fatalf("peer query: %v %d %x, want %s", err, res.GetCode(), res.GetValue(), p.MachineID)
	}
	if err := consensus.VerifyQuery(c.app.AppHash(), res.Value, res.ProofOps.Ops); err != nil {
		t.Fatalf("peer query proof: %v", err)
	}
	if a := c.account(op.Account()); a.Balance != 9000 {
		t.Fatalf("operator balance %d, want 9000 after bonding", a.Balance)
	}
}

func TestSettlement(t *testing.T) {
	buyer, gb := signer("buyer", 1_000_000)
	gw, gg := signer("gateway", 0)
	op, gop := signer("operator", 5000)
	c := newChain(t, "", genesisTime, testParams(), 1, gb, gg, gop)
	p := newProvider(t)
	c.mustApply(
		c.signAt(op, 0, p.Register(1000, 60)),
		c.signAt(buyer, 0, &consensus.EscrowFund{Amount: 10_000, Settler: gw.Account()}),
	)
	rec := func(i byte, price uint64) consensus.PaymentRecord {
		return consensus.PaymentRecord{Payer: buyer.Account(), Provider: p.MachineID,
			RequestDigest: consensus.Hash32{i}, QuoteDigest: consensus.Hash32{i, 1}, Price: price, ReceiptHash: consensus.Hash32{i, 2}}
	}
	c.mustApply(c.signAt(gw, 0, &consensus.Settlement{Records: []consensus.PaymentRecord{rec(1, 100), rec(2, 250)}}))
	var e consensus.Escrow
	c.query("escrow/"+buyer.Account().String(), &e)
	if e.Balance != 10_000-350 {
		t.Fatalf("escrow %d, want %d", e.Balance, 10_000-350)
	}
	if a := c.account(op.Account()); a.Balance != 4000+350 {
		t.Fatalf("operator balance %d, want %d", a.Balance, 4000+350)
	}
	var sr consensus.SettledRecord
	d := rec(2, 0).RequestDigest
	if !c.query("record/"+buyer.Account().String()+"/"+hexOf(d[:]), &sr) || sr.Record.Price != 250 {
		t.Fatalf("settled record = %+v", sr)
	}
	stranger, _ := signer("stranger", 0)
	wantCodes(t, c, [][]byte{
		c.signAt(gw, 1, &consensus.Settlement{Records: []consensus.PaymentRecord{rec(3, 5), rec(1, 100)}}),
		c.signAt(gw, 1, &consensus.Settlement{Records: []consensus.PaymentRecord{rec(4, 20_000)}}),
		c.signAt(op, 1, &consensus.Settlement{Records: []consensus.PaymentRecord{rec(5, 1)}}),
		c.signAt(gw, 1, &consensus.Settlement{Records: []consensus.PaymentRecord{{Payer: stranger.Account(), Provider: p.MachineID, Price: 1}}}),
	}, consensus.CodeDuplicateRecord, consensus.CodeOverdraft, consensus.CodeNotAuthorized, consensus.CodeUnknownEscrow)
	c.query("escrow/"+buyer.Account().String(), &e)
	if e.Balance != 10_000-350 {
		t.Fatalf("escrow changed by rejected settlements: %d", e.Balance)
	}
}

func TestUnbondAndWithdraw(t *testing.T) {
	op, gop := signer("operator", 5000)
	other, goth := signer("other", 5000)
	c := newChain(t, "", genesisTime, testParams(), 1, gop, goth)
	p := newProvider(t)
	c.mustApply(c.signAt(op, 0, p.Register(1000, 3)))
	wantCodes(t, c, [][]byte{
		c.signAt(op, 1, &consensus.ProviderWithdraw{MachineID: p.MachineID}),
		c.signAt(other, 0, &consensus.ProviderUnbond{MachineID: p.MachineID}),
	}, consensus.CodeUnbonding, consensus.CodeNotAuthorized)
	c.mustApply(c.signAt(op, 1, &consensus.ProviderUnbond{MachineID: p.MachineID}))
	if st := c.standing(p); st.BondLive || st.StandingBP != 0 {
		t.Fatalf("standing while unbonding = %+v, want 0 and bond not live", st)
	}
	wantCodes(t, c, [][]byte{c.signAt(op, 2, &consensus.ProviderWithdraw{MachineID: p.MachineID})}, consensus.CodeUnbonding)
	c.block()
	c.block()
	c.mustApply(c.signAt(op, 2, &consensus.ProviderWithdraw{MachineID: p.MachineID}))
	if a := c.account(op.Account()); a.Balance != 5000 {
		t.Fatalf("balance after withdraw %d, want 5000", a.Balance)
	}
	var gone consensus.Provider
	if c.query("provider/"+p.MachineID.String(), &gone) {
		t.Fatal("registration still present after withdraw")
	}
}

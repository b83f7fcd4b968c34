package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func TestRegistrationChecks(t *testing.T) {
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gop)
	p, q := newMachine(t), newMachine(t)
	mismatched := p.register(t, op, 1000, 60)
	mismatched.PQPub = q.ID.PQPublicKey().Bytes()
	badPeer := q.register(t, op, 1000, 60)
	badPeer.PeerID = "not-a-peer-id"
	wantCodes(t, c, [][]byte{
		c.SignAt(op, 0, p.register(t, op, 999, 60)),
		c.SignAt(op, 0, mismatched),
		c.SignAt(op, 0, badPeer),
	}, ledger.CodeBondTooLow, ledger.CodeBadIdentity, ledger.CodeBadIdentity)
	c.mustApply(c.SignAt(op, 0, p.register(t, op, 1000, 60)))
	// The operator holds every key here, so all signatures verify; the
	// state refuses re-pairing p's peer with q or p with q's peer.
	samePeer := q.unsigned(t, 1000, 60)
	samePeer.PeerID = p.PeerID.String()
	q.signMachine(t, samePeer, op.Account())
	signPeer(t, samePeer, p.PeerKey, op.Account())
	otherPeer := p.unsigned(t, 1000, 60)
	otherPeer.PeerID = q.PeerID.String()
	p.signMachine(t, otherPeer, op.Account())
	signPeer(t, otherPeer, q.PeerKey, op.Account())
	wantCodes(t, c, [][]byte{
		c.SignAt(op, 1, p.register(t, op, 1000, 60)),
		c.SignAt(op, 1, samePeer),
		c.SignAt(op, 1, otherPeer),
		c.SignAt(op, 1, q.register(t, op, 20_000, 60)),
	}, ledger.CodeDuplicate, ledger.CodePairingChanged, ledger.CodePairingChanged, ledger.CodeOverdraft)
	var got ledger.Provider
	if !c.get(ledger.KeyProvider(p.machineID()), &got) || got.Operator != op.Account() || got.Bond != 1000 || got.PeerID != p.PeerID.String() {
		t.Fatalf("registration = %+v", got)
	}
	// The peer index names the machine a peer ID is registered to.
	if got, want := c.raw(ledger.KeyPeer(p.PeerID.String())), p.machineID(); string(got) != string(want[:]) {
		t.Fatalf("peer index holds %x, want %s", got, p.machineID())
	}
	if a := c.account(op.Account()); a.Balance != 9000 {
		t.Fatalf("operator balance %d, want 9000 after bonding", a.Balance)
	}
}

// TestSettlement settles gateway-signed records against the (buyer,
// gateway) escrow; a duplicate, an overdraft, a record signed by another
// account and one without an escrow are each skipped and reported, the
// batch's good records settle, and skipped records change nothing.
func TestSettlement(t *testing.T) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	gw, gg := ledgertest.Signer(testChain, "gateway", 0)
	op, gop := ledgertest.Signer(testChain, "operator", 5000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gg, gop)
	p := newMachine(t)
	c.mustApply(
		c.SignAt(op, 0, p.register(t, op, 1000, 60)),
		c.SignAt(buyer, 0, &ledger.EscrowFund{Amount: 10_000, Settler: gw.Account()}),
	)
	rec := func(i byte, price uint64) receipt.PaymentRecord {
		env, envHash, rd := p.paidReceipt(t, string(rune('0'+i)), buyer.Account(), gw.Account(), 0)
		return ledgertest.Signed(t, gw, receipt.PaymentRecord{Payer: buyer.Account(), Provider: p.machineID(),
			RequestDigest: rd, QuoteDigest: terms.Hash32{i, 1}, Price: price, ReceiptHash: envHash, Receipt: env})
	}
	res := c.mustApply(c.SignAt(gw, 0, &ledger.Settlement{Records: []receipt.PaymentRecord{rec(1, 100), rec(2, 250)}}))
	wantSkipped(t, res.Txs[0], 2, nil)
	var e ledger.Escrow
	e = c.escrow(buyer.Account(), gw.Account())
	if e.Balance != 10_000-350 {
		t.Fatalf("escrow %d, want %d", e.Balance, 10_000-350)
	}
	if a := c.account(op.Account()); a.Balance != 4000+350 {
		t.Fatalf("operator balance %d, want %d", a.Balance, 4000+350)
	}
	var sr ledger.SettledRecord
	d := rec(2, 0).RequestDigest
	if !c.get(ledger.KeyRecord(buyer.Account(), d), &sr) || sr.Record.Price != 250 {
		t.Fatalf("settled record = %+v", sr)
	}
	stranger, _ := ledgertest.Signer(testChain, "stranger", 0)
	forged := rec(5, 1)
	forged.Sig = ledgertest.Signed(t, op, forged).Sig // op signs, record names gw
	env, envHash, rd := p.paidReceipt(t, "6", stranger.Account(), stranger.Account(), 0)
	byStranger := ledgertest.Signed(t, stranger, receipt.PaymentRecord{Payer: stranger.Account(), Provider: p.machineID(),
		RequestDigest: rd, Price: 1, ReceiptHash: envHash, Receipt: env})
	// The operator submits: anyone may, the settler's signature authorizes.
	res = c.mustApply(c.SignAt(op, 1, &ledger.Settlement{Records: []receipt.PaymentRecord{
		rec(3, 5), rec(1, 100), rec(4, 20_000), forged, byStranger, rec(3, 5),
	}}))
	r := wantSkipped(t, res.Txs[0], 1, map[int]ledger.Code{
		1: ledger.CodeDuplicateRecord, 2: ledger.CodeOverdraft, 3: ledger.CodeBadRecordSig,
		4: ledger.CodeUnknownEscrow, 5: ledger.CodeDuplicateRecord,
	})
	if r.Count(ledger.CodeDuplicateRecord) != 2 || r.Count(ledger.CodeOverdraft) != 1 {
		t.Fatalf("counts %+v", r.Counts)
	}
	e = c.escrow(buyer.Account(), gw.Account())
	if e.Balance != 10_000-355 {
		t.Fatalf("escrow %d after skipped records, want %d", e.Balance, 10_000-355)
	}
	if a := c.account(op.Account()); a.Balance != 4000+355 {
		t.Fatalf("operator balance %d, want %d", a.Balance, 4000+355)
	}
}

func TestUnbondAndWithdraw(t *testing.T) {
	op, gop := ledgertest.Signer(testChain, "operator", 5000)
	other, goth := ledgertest.Signer(testChain, "other", 5000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gop, goth)
	p := newMachine(t)
	c.mustApply(c.SignAt(op, 0, p.register(t, op, 1000, 3)))
	wantCodes(t, c, [][]byte{
		c.SignAt(op, 1, &ledger.ProviderWithdraw{MachineID: p.machineID()}),
		c.SignAt(other, 0, &ledger.ProviderUnbond{MachineID: p.machineID()}),
	}, ledger.CodeUnbonding, ledger.CodeNotAuthorized)
	c.mustApply(c.SignAt(op, 1, &ledger.ProviderUnbond{MachineID: p.machineID()}))
	if st := c.standing(p); st.BondLive || st.StandingBP != 0 {
		t.Fatalf("standing while unbonding = %+v, want 0 and bond not live", st)
	}
	wantCodes(t, c, [][]byte{c.SignAt(op, 2, &ledger.ProviderWithdraw{MachineID: p.machineID()})}, ledger.CodeUnbonding)
	c.block()
	c.block()
	c.mustApply(c.SignAt(op, 2, &ledger.ProviderWithdraw{MachineID: p.machineID()}))
	if a := c.account(op.Account()); a.Balance != 5000 {
		t.Fatalf("balance after withdraw %d, want 5000", a.Balance)
	}
	var gone ledger.Provider
	if c.get(ledger.KeyProvider(p.machineID()), &gone) {
		t.Fatal("registration still present after withdraw")
	}
}

package testnet_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestFourValidators runs one 4-validator chain through a transfer, a
// registration, escrow and settlement, a parameter change, rejected
// transactions, SLA verdicts and standing, and a validator stop/restart.
func TestFourValidators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	params := ledger.DefaultParams()
	params.MinServingBond = 1000
	params.SLAWindowHours = 6
	buyer, op := seedKey("buyer"), seedKey("op")
	id := func(name string) terms.AccountID { return ledgertest.Account(seedKey(name)) }
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{
		Validators: 4, Params: &params,
		// Hour 10 of the chain lasts for the whole test.
		GenesisTime: time.Now().Add(-10*time.Hour - 20*time.Minute),
		Accounts: []ledger.GenesisAccount{
			{Account: id("buyer"), Balance: 1_000_000}, {Account: id("op"), Balance: 10_000},
			{Account: id("rich"), Balance: ^uint64(0) - 5},
		},
	})
	s := newSender(net)
	n0, n1, n2 := net.Nodes[0], net.Nodes[1], net.Nodes[2]
	prov, err := testnet.NewProvider()
	if err != nil {
		t.Fatal(err)
	}

	// Ledger: transfer, registration, escrow, settlement, param change —
	// sent through different nodes.
	next := params
	next.SurchargeTEE = 4242
	submit(ctx, t, n0, s.Sign(t, buyer, &ledger.Transfer{To: id("bob"), Amount: 100}),
		s.Sign(t, buyer, &ledger.EscrowFund{Amount: 10_000}))
	// paid is a machine with a session, to sign the settled record's receipt.
	paid := ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	paidReg, err := paid.Register(net.ChainID, id("op"), 1000, 60)
	if err != nil {
		t.Fatal(err)
	}
	paidEnv, paidHash, paidRD, err := paid.PaidReceipt([]byte("answer"), id("buyer"), id("buyer"), 300)
	if err != nil {
		t.Fatal(err)
	}
	submit(ctx, t, n1, s.Sign(t, op, prov.Register(net.ChainID, id("op"), 1000, 60)), s.Sign(t, op, paidReg))
	rec := receipt.PaymentRecord{Payer: id("buyer"), Provider: paid.MachineID(), RequestDigest: paidRD,
		QuoteDigest: terms.Hash32{2}, Price: 300, ReceiptHash: paidHash, Receipt: paidEnv, ExpiryHeight: 300}
	if err := s.Signer(buyer).SignRecord(&rec); err != nil {
		t.Fatal(err)
	}
	submit(ctx, t, n2, s.Sign(t, buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}}),
		s.Sign(t, op, &ledger.NameBind{Name: "tenzro-devnet", ModelID: terms.Hash32{0xd1}, MachineID: prov.MachineID}))
	submit(ctx, t, n0, s.Sign(t, net.Operators[0], &ledger.ParamProposal{Params: next}))
	submit(ctx, t, n1, s.Sign(t, net.Operators[1], &ledger.ParamVote{ProposalID: 0, Approve: true}),
		s.Sign(t, net.Operators[2], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	h := net.MaxHeight()
	if _, err := sameAppHash(ctx, net, h); err != nil {
		t.Fatal(err)
	}
	for i, nd := range net.Running() {
		b, _, err1 := nd.Account(ctx, id("bob"))
		o, _, err2 := nd.Account(ctx, id("op"))
		p, err3 := nd.Params(ctx)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		if b.Balance != 100 || o.Balance != 10_000-2*1000+300 || p != next {
			t.Fatalf("node %d: bob %+v operator %+v params %+v", i, b, o, p)
		}
		model, by, ok, err := nd.NameRecord(ctx, "tenzro-devnet")
		names, err2 := nd.NameRecords(ctx)
		if err != nil || err2 != nil || !ok || model != (terms.Hash32{0xd1}) || by != id("op") || len(names) != 1 || names[0].ModelID != model {
			t.Fatalf("node %d: name record %s by %s (%v, %v), list %+v (%v)", i, model, by, ok, err, names, err2)
		}
	}

	// Invalid transactions are refused with their codes; state is unchanged.
	before, _, _ := n0.Account(ctx, id("buyer"))
	escrowBefore, _, _ := n0.Escrow(ctx, id("buyer"), id("buyer"))
	good := s.Sign(t, buyer, &ledger.Transfer{To: id("bob"), Amount: 1})
	s.Unsign(id("buyer"))
	badSig := append([]byte(nil), good...)
	badSig[len(badSig)-1] ^= 1
	stale, _ := s.Signer(buyer).SignTx(0, &ledger.Transfer{To: id("bob"), Amount: 2})
	overdraft, _ := s.Signer(buyer).SignTx(before.Nonce, &ledger.Transfer{To: id("bob"), Amount: 2_000_000})
	overflow, _ := s.Signer(buyer).SignTx(before.Nonce, &ledger.Transfer{To: id("rich"), Amount: 6})
	other, _ := testnet.NewProvider()
	unknown := receipt.PaymentRecord{Payer: id("buyer"), Provider: other.MachineID, Price: 1, ExpiryHeight: 300}
	stranger := ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	env, envHash, err := stranger.Receipt([]byte("not prov's answer"))
	if err != nil {
		t.Fatal(err)
	}
	foreign := receipt.PaymentRecord{Payer: id("buyer"), Provider: prov.MachineID, RequestDigest: terms.Hash32{0x77}, Price: 1,
		ReceiptHash: envHash, Receipt: env, ExpiryHeight: 300}
	for _, r := range []*receipt.PaymentRecord{&unknown, &foreign} {
		if err := s.Signer(buyer).SignRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		raw  []byte
		code ledger.Code
	}{
		"bad signature": {badSig, ledger.CodeBadSignature}, "replayed nonce": {stale, ledger.CodeStaleNonce},
		"overdraft": {overdraft, ledger.CodeOverdraft}, "overflow": {overflow, ledger.CodeOverflow},
	} {
		_, err := n0.BroadcastTx(ctx, tc.raw)
		if got := ledger.CodeOf(err); got != tc.code {
			t.Errorf("%s: %v (%v), want %v", name, got, err, tc.code)
		}
	}
	if err := net.WaitHeight(ctx, net.MaxHeight()+2); err != nil {
		t.Fatal(err)
	}
	for i, nd := range net.Running() {
		after, _, _ := nd.Account(ctx, id("buyer"))
		escrowAfter, _, _ := nd.Escrow(ctx, id("buyer"), id("buyer"))
		if after != before || escrowAfter != escrowBefore {
			t.Fatalf("node %d: buyer %+v escrow %+v changed from %+v %+v", i, after, escrowAfter, before, escrowBefore)
		}
	}
	// Records of an unknown provider or with another machine's receipt are
	// skipped and reported; the escrow does not move.
	skipped := submit(ctx, t, n0, s.Sign(t, buyer, &ledger.Settlement{Records: []receipt.PaymentRecord{unknown, foreign}}))
	rep, err := ledger.DecodeSettleReport(skipped[0].Data)
	if err != nil || rep.Settled != 0 || len(rep.Skipped) != 2 || rep.Skipped[0].Code != ledger.CodeUnknownProvider ||
		rep.Skipped[1].Code != ledger.CodeWrongMachine {
		t.Fatalf("settle report %+v (%v), want both records skipped: unknown provider, wrong machine", rep, err)
	}
	if e, _, _ := n0.Escrow(ctx, id("buyer"), id("buyer")); e != escrowBefore {
		t.Fatalf("skipped records moved the escrow: %+v -> %+v", escrowBefore, e)
	}

	// Standing: hours 4 and 5 of the window 4..9 unavailable (k = 2 of N = 6).
	var verdicts [][]byte
	for hour := uint64(4); hour <= 9; hour++ {
		for v := range 4 {
			avail := hour > 5 || (hour == 5 && v < 2) // hour 5: only 2 of 4 say available
			verdicts = append(verdicts, s.Sign(t, net.Operators[v], &ledger.SLAVerdict{MachineID: prov.MachineID, Hour: hour, Available: avail}))
		}
	}
	res := submit(ctx, t, n0, verdicts...)
	h = res[len(res)-1].Height
	if _, err := sameAppHash(ctx, net, h); err != nil {
		t.Fatal(err)
	}
	want := params.StandingBondedBP + params.StandingAvailBP*4/6
	var first []byte
	for i, nd := range net.Running() {
		st, err := nd.Standing(ctx, prov.MachineID, h)
		if err != nil {
			t.Fatal(err)
		}
		if st.CurrentHour != 10 || st.AvailableHours != 4 || st.StandingBP != want {
			t.Fatalf("node %d standing %+v, want 4 of 6 hours, %d bp", i, st, want)
		}
		js, _ := json.Marshal(st)
		if i == 0 {
			first = js
		} else if string(js) != string(first) {
			t.Fatalf("node %d standing %s differs from node 0 %s", i, js, first)
		}
	}

	// One validator down: the chain goes on; restarted, it catches up.
	if err := net.StopNode(ctx, 3); err != nil {
		t.Fatal(err)
	}
	stopped := net.MaxHeight()
	submit(ctx, t, n0, s.Sign(t, buyer, &ledger.Transfer{To: id("bob"), Amount: 5}))
	if err := net.WaitHeight(ctx, stopped+3); err != nil {
		t.Fatal("chain stalled with 3 of 4 validators: ", err)
	}
	if err := net.StartNode(ctx, 3); err != nil {
		t.Fatal(err)
	}
	target := n0.App().Height() + 2
	if _, err := sameAppHash(ctx, net, target); err != nil {
		t.Fatal("restarted validator: ", err)
	}
	if b, _, err := net.Nodes[3].Account(ctx, id("bob")); err != nil || b.Balance != 105 {
		t.Fatalf("restarted node: bob %+v %v, want 105", b, err)
	}
}

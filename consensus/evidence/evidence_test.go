package evidence_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestEvidencePack runs a 4-validator chain and a follower full node,
// settles records (some with receipts the chain verifies) through the
// follower, exports the buyer's pack for a span of heights from the
// follower, and checks that it verifies offline against the genesis
// validators, says exactly what it proves, and that each kind of tampering
// fails with its own error.
func TestEvidencePack(t *testing.T) {
	// Bounded by the chain's progress, not the wall clock: under load every
	// step is slower, but a chain that stops still fails the test at once.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	params := ledger.DefaultParams()
	params.MinServingBond = 1
	dir := t.TempDir()
	net := testnet.StartT(ctx, t, filepath.Join(dir, "net"), testnet.Options{Validators: 4, Params: &params,
		Accounts: []ledger.GenesisAccount{{Account: account("buyer"), Balance: 1_000_000},
			{Account: account("carol"), Balance: 1_000_000}, {Account: account("op"), Balance: 10}}})
	ctx, stop := net.Progress(ctx, time.Minute)
	defer stop()
	follower, err := net.StartFollower(ctx, filepath.Join(dir, "follower"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := follower.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	m, err := ledgertest.NewMachine(filepath.Join(dir, "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	reg, err := m.Register(net.ChainID, account("op"), 1, 0)
	if err != nil {
		t.Fatal(err)
	}

	// The follower is no validator: the set is the genesis four, without its key.
	fkeys, err := consensus.InitHome(filepath.Join(dir, "follower"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := follower.Validators(ctx)
	if err != nil || len(vals) != 4 {
		t.Fatalf("follower sees %d validators (%v), want 4", len(vals), err)
	}
	for _, v := range vals {
		if bytes.Equal(v.ConsPubKey, fkeys.ConsPubKey) {
			t.Fatal("the follower's key is a validator's")
		}
	}

	// Every transaction goes through the follower, which relays it.
	s := &sender{node: follower, nonces: ledgertest.NewNonces(net.ChainID)}
	s.submit(ctx, t, "op", reg)
	s.submit(ctx, t, "buyer", &ledger.EscrowFund{Amount: 100_000})
	s.submit(ctx, t, "carol", &ledger.EscrowFund{Amount: 900_000})
	base := receipt.PaymentRecord{Provider: m.MachineID(), QuoteDigest: terms.Hash32{0xcc}}
	signed := records(account("buyer"), base, 1, 2)
	// Each record carries the machine's receipt of its own call (seeded by
	// the digest records gave it), naming its payer as its own settler.
	sig := func(name string, recs []receipt.PaymentRecord) []receipt.PaymentRecord {
		for i := range recs {
			env, h, rd, err := m.PaidReceipt(append([]byte(name), recs[i].RequestDigest[:]...), account(name), account(name), 0)
			if err != nil {
				t.Fatal(err)
			}
			recs[i].Receipt, recs[i].ReceiptHash, recs[i].RequestDigest = env, h, rd
			recs[i].ExpiryHeight = 300
			if err := ledger.NewSigner(seedKey(name), net.ChainID).SignRecord(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return recs
	}
	hA := s.submit(ctx, t, "buyer", &ledger.Settlement{Records: sig("buyer", signed)})[0]
	hB := s.submit(ctx, t, "buyer", &ledger.Settlement{Records: sig("buyer", records(account("buyer"), base, 100, 1))})[0]
	// Receipts make records ~6 KB, so carol's 1000 go in 10 transactions.
	for i := range 10 {
		s.submit(ctx, t, "carol", &ledger.Settlement{Records: sig("carol", records(account("carol"), base, uint32(200+100*i), 100))})
	}
	hC := s.submit(ctx, t, "buyer", &ledger.Settlement{Records: sig("buyer", records(account("buyer"), base, 300, 1))})[0]

	pack, err := evidence.Export(ctx, follower, account("buyer"), hA, hB)
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := evidence.LoadValidatorSet(net.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pack.json")
	if err := pack.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	read := func() *evidence.Pack {
		p, err := evidence.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rep, err := evidence.Verify(read(), trusted)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, hA, hB, hC)

	// The provider's pack of the same span: the buyer's 3 records (carol's
	// settled later), proven over the provider index.
	ppack, err := evidence.Export(ctx, follower, m.MachineID(), hA, hB)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := evidence.Verify(ppack, trusted)
	if err != nil || prep.Machine == nil || *prep.Machine != m.MachineID() || len(prep.Records) != 3 || prep.TotalPaid != 31 {
		t.Fatalf("provider pack report %+v (%v), want 3 records paying 31 to %s", prep, err, m.MachineID())
	}
	ppack.Records[0].Record.Price++
	if _, err := evidence.Verify(ppack, trusted); !errors.Is(err, evidence.ErrRecord) {
		t.Fatalf("provider pack with an altered record: %v, want ErrRecord", err)
	}
	validatorRoot, err := net.Nodes[2].App().AppHashAt(hB)
	if err != nil || !bytes.Equal(validatorRoot, rep.StateRoot[:]) {
		t.Fatalf("pack state root %s, validator 2 has %x at %d (%v)", rep.StateRoot, validatorRoot, hB, err)
	}
	t.Log(rep.String())

	// An exported validator set file works as the trusted set too.
	exported, err := evidence.ExportValidatorSet(ctx, net.Nodes[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := exported.WriteFile(filepath.Join(dir, "validators.json")); err != nil {
		t.Fatal(err)
	}
	fromFile, err := evidence.LoadValidatorSet(filepath.Join(dir, "validators.json"))
	if err != nil || !bytes.Equal(fromFile.Set.Hash(), trusted.Set.Hash()) || fromFile.ChainID != net.ChainID {
		t.Fatalf("exported set %+v (%v) differs from genesis set", fromFile, err)
	}
	if _, err := evidence.Verify(read(), fromFile); err != nil {
		t.Fatal(err)
	}

	// A span with no records proves their absence.
	empty, err := evidence.Export(ctx, follower, account("buyer"), 1, hA-1)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := evidence.Verify(empty, trusted); err != nil || len(r.Records) != 0 || r.TotalPaid != 0 {
		t.Fatalf("empty span: %d records, %d paid, %v", len(r.Records), r.TotalPaid, err)
	}

	// 1000 records in one pack: size and offline verification time.
	big, err := evidence.Export(ctx, follower, account("carol"), 1, follower.App().Height()-1)
	if err != nil {
		t.Fatal(err)
	}
	if err := big.WriteFile(filepath.Join(dir, "big.json")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "big.json"))
	start := time.Now()
	if r, err := evidence.Verify(big, trusted); err != nil || len(r.Records) != 1000 {
		t.Fatalf("carol: %d records, %v", len(r.Records), err)
	}
	small, _ := os.Stat(path)
	t.Logf("pack of 3 records: %d bytes; of 1000 records: %d bytes, verified in %v", small.Size(), st.Size(), time.Since(start))

	tamperCases(t, read, trusted)
	oneSignatureLess(t, read(), trusted)
}

func checkReport(t *testing.T, rep evidence.Report, hA, hB, hC int64) {
	t.Helper()
	if rep.Account != account("buyer") || rep.FromHeight != hA || rep.ToHeight != hB || rep.HeaderHeight != hB+1 {
		t.Fatalf("report scope %s %d..%d header %d", rep.Account, rep.FromHeight, rep.ToHeight, rep.HeaderHeight)
	}
	if len(rep.Records) != 3 || rep.TotalPaid != 10+11+10 || rep.ReceiptsChecked != 3 {
		t.Fatalf("report: %d records, %d paid, %d receipts checked; want 3, 31, 3", len(rep.Records), rep.TotalPaid, rep.ReceiptsChecked)
	}
	for _, sr := range rep.Records {
		if sr.Height == hC || sr.Record.Payer != account("buyer") {
			t.Fatalf("record %+v outside the pack's scope", sr)
		}
	}
	if rep.Validators != 4 || rep.TotalPower != 400 || 3*rep.SignedPower <= 2*rep.TotalPower || rep.TrustedTotalPower != 400 {
		t.Fatalf("report power: %d of %d (%d validators), trusted %d of %d",
			rep.SignedPower, rep.TotalPower, rep.Validators, rep.TrustedSignedPower, rep.TrustedTotalPower)
	}
	if !strings.Contains(rep.String(), "exactly 3 payment records") {
		t.Fatalf("report text:\n%s", rep)
	}
}

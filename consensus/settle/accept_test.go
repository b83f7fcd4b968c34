package settle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestAcceptRefusals: forged signature, another machine, expired,
// receipt hash mismatch, missing receipt, a conflicting record — each a
// *Refusal with its code, nothing stored; a re-delivery is acknowledged
// again; an underpriced record is kept and counted, across a reopen.
func TestAcceptRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, 1_000_000)
	reg := prometheus.NewRegistry()
	dir := t.TempDir()
	var expectDigest terms.Hash32
	open := func() *Collector {
		c, err := OpenCollector(CollectorConfig{Dir: dir, Interval: time.Hour},
			CollectorDeps{Machine: w.machine.MachineID(), Chain: w.chain, Submitter: w.submitter(w.operator), Registerer: reg,
				Expect: func(d terms.Hash32) (uint64, bool) { return 1000, d == expectDigest }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	good := w.signed(1, 300)
	if err := c.Accept(ctx, w.machine.PeerID, &good); err != nil {
		t.Fatal(err)
	}

	other := ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	resign := func(r receipt.PaymentRecord) receipt.PaymentRecord {
		if err := receipt.SignRecord(w.gateway, w.net.ChainID, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	forged := w.signed(2, 300)
	forged.Price = 3000 // altered after signing
	foreign := w.signed(3, 300)
	foreign.Provider = other.MachineID()
	foreign = resign(foreign)
	expired := w.signed(4, 300)
	expired.ExpiryHeight = w.node.App().Height()
	expired = resign(expired)
	badHash := w.signed(5, 300)
	badHash.Receipt = append([]byte(nil), badHash.Receipt...)
	badHash.Receipt[len(badHash.Receipt)-1] ^= 1
	noReceipt := w.signed(6, 300)
	noReceipt.Receipt = nil
	conflict := good
	conflict.Price = 301
	conflict = resign(conflict)
	zero := w.signed(7, 300)
	zero.Price = 0
	cases := []struct {
		name string
		rec  receipt.PaymentRecord
		code ledger.Code
	}{
		{"forged signature", forged, ledger.CodeBadRecordSig},
		{"other machine", foreign, ledger.CodeWrongMachine},
		{"expired", expired, ledger.CodeExpiredRecord},
		{"receipt hash mismatch", badHash, ledger.CodeBadReceipt},
		{"no receipt", noReceipt, ledger.CodeBadReceipt},
		{"conflicting record", conflict, ledger.CodeDuplicateRecord},
		{"price 0", zero, ledger.CodeMalformed},
	}
	for _, tc := range cases {
		err := c.Accept(ctx, w.machine.PeerID, &tc.rec)
		var ref *Refusal
		if !errors.As(err, &ref) || ledger.Code(ref.Code) != tc.code {
			t.Errorf("%s: got %v, want a refusal with code %d (%s)", tc.name, err, tc.code, tc.code)
		}
	}
	if err := c.Accept(ctx, w.machine.PeerID, nil); err == nil {
		t.Error("nil record accepted")
	}
	if st := c.Stats(); st.Pending != 1 {
		t.Fatalf("%d records held after the refusals, want only the good one", st.Pending)
	}
	if got := c.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)); got != good.Price {
		t.Fatalf("held %d, want %d", got, good.Price)
	}
	if got := gathered(t, reg, "tenzro_settle_collector_records_rejected_total"); got != float64(len(cases)+1) {
		t.Errorf("rejected metric %v, want %d", got, len(cases)+1)
	}
	again := good
	if err := c.Accept(ctx, w.machine.PeerID, &again); err != nil {
		t.Fatalf("re-delivery of a held record: %v", err)
	}

	cheap := w.signed(8, 400)
	expectDigest = cheap.RequestDigest
	if err := c.Accept(ctx, w.machine.PeerID, &cheap); err != nil {
		t.Fatalf("underpriced record refused: %v", err)
	}
	if got := c.Underpriced(ledgertest.Account(w.gateway)); got != 1 {
		t.Fatalf("underpriced %d, want 1", got)
	}
	if got := c.Shortfall(ledgertest.Account(w.gateway)); got != 600 {
		t.Fatalf("shortfall %d, want 600", got)
	}
	if got := c.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)); got != good.Price+cheap.Price {
		t.Fatalf("held %d, want %d (an underpriced record is still money)", got, good.Price+cheap.Price)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open()
	defer c.Close()
	if c.Underpriced(ledgertest.Account(w.gateway)) != 1 || c.Shortfall(ledgertest.Account(w.gateway)) != 600 || c.Stats().Pending != 2 {
		t.Fatalf("after reopen: underpriced %d shortfall %d stats %+v", c.Underpriced(ledgertest.Account(w.gateway)), c.Shortfall(ledgertest.Account(w.gateway)), c.Stats())
	}
	recs, err := c.Records(ctx, ledgertest.Account(w.buyer), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range recs {
		if e.Record.RequestDigest == cheap.RequestDigest && (!e.Underpriced || e.Expected != 1000) {
			t.Fatalf("stored underpriced record: underpriced %v expected %d", e.Underpriced, e.Expected)
		}
	}
}

// TestOutboxSignChecks: bad input to Sign is an error and stores
// nothing; a second record for one request is ErrDuplicate.
func TestOutboxSignChecks(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, 1000)
	ob, err := OpenOutbox(OutboxConfig{Dir: t.TempDir()}, OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: w.submitter(w.gateway),
		Deliver: func(context.Context, peer.ID, []receipt.PaymentRecord) ([]bool, error) { return nil, errors.New("no") }})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	ok := w.record(1, 10)
	if err := ob.Sign(ctx, &ok, w.machine.PeerID); err != nil {
		t.Fatal(err)
	}
	if ok.ExpiryHeight <= w.node.App().Height() || ok.ExpiryHeight > w.node.App().Height()+DefaultOutboxConfig().Validity {
		t.Fatalf("expiry height %d at chain height %d", ok.ExpiryHeight, w.node.App().Height())
	}
	dup := w.record(1, 11)
	if err := ob.Sign(ctx, &dup, w.machine.PeerID); !errors.Is(err, ErrDuplicate) || dup.Sig != nil {
		t.Fatalf("second record for one request: %v (sig set: %v)", err, dup.Sig != nil)
	}
	badHash := w.record(2, 10)
	badHash.ReceiptHash[0] ^= 1
	zero := w.record(3, 0)
	for name, r := range map[string]receipt.PaymentRecord{"receipt hash": badHash, "price 0": zero} {
		if err := ob.Sign(ctx, &r, w.machine.PeerID); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	rec := w.record(4, 10)
	if err := ob.Sign(ctx, &rec, ""); err == nil {
		t.Error("signed for no provider peer")
	}
	if st := ob.Stats(); st.Pending != 1 || ob.Unsettled(ledgertest.Account(w.buyer)) != 10 {
		t.Fatalf("after bad input: %+v, unsettled %d", st, ob.Unsettled(ledgertest.Account(w.buyer)))
	}
}

// TestAcceptBeforeFirstBlock: a provider whose chain node has committed
// no block since genesis (it just joined and is still catching up) keeps
// a good record rather than asking the settler to come back: the
// provider holds the settler's next call only until the record of the
// last one arrives, and catching up can take longer than that. A forged
// record is still refused.
func TestAcceptBeforeFirstBlock(t *testing.T) {
	w := newWorld(t, 1_000_000)
	ctx := w.progress()
	// No peers: the follower stays at genesis, catching up.
	f, err := consensus.New(consensus.Config{Home: t.TempDir(), Moniker: "alone", P2PListen: "tcp://127.0.0.1:0",
		GenesisFile: w.net.GenesisFile, Follower: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.Stop(context.Background())
	chain := NodeChain(f)
	if _, err := chain.Height(ctx); !errors.Is(err, ErrNoChain) || chain.ChainID() != w.net.ChainID {
		t.Fatalf("the follower: height err %v, chain ID %q; want ErrNoChain at genesis of %q", err, chain.ChainID(), w.net.ChainID)
	}
	c, err := OpenCollector(CollectorConfig{Dir: t.TempDir(), Interval: time.Hour},
		CollectorDeps{Machine: w.machine.MachineID(), Chain: chain, Submitter: w.submitter(w.operator), Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	good := w.signed(1, 300)
	if err := c.Accept(ctx, w.machine.PeerID, &good); err != nil {
		t.Fatalf("a good record before the first block: %v", err)
	}
	if got := c.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)); got != good.Price {
		t.Fatalf("held %d, want %d", got, good.Price)
	}
	forged := w.signed(2, 300)
	forged.Price = 3000
	var ref *Refusal
	if err := c.Accept(ctx, w.machine.PeerID, &forged); !errors.As(err, &ref) || ledger.Code(ref.Code) != ledger.CodeBadRecordSig {
		t.Fatalf("a forged record before the first block: %v, want a bad-signature refusal", err)
	}
	if st := c.Stats(); st.Pending != 1 {
		t.Fatalf("%d records held, want the good one", st.Pending)
	}
}

package validator

import (
	"path/filepath"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// disputeWithoutCommittee: a wrong batch of a model no validator declared
// (the perturbed weights under another model ID) is settled and sampled;
// the serving provider's disputer takes it to the chain, which refuses it
// at once with CodeNoCommittee before taking any bond, and the disputer
// marks it refused instead of asking again every round (the devnet once
// logged that refusal hundreds of times a minute). No dispute exists, and
// the disputer's balance is what it was.
func (dn *disputeNet) disputeWithoutCommittee(redo expert.LocalRedo, m *llm.Model) {
	t := dn.t
	t.Helper()
	held := dn.model
	dn.model = terms.Hash32{0x0c, 0x0c, 0x0c} // declared by no validator
	u, digest, batches := dn.holderCall(m)
	dn.model = held
	ev, err := expert.Recheck(dn.ctx, &batches[0], redo, time.Now())
	if err != nil || ev == nil {
		t.Fatalf("re-check of a wrong batch of the undeclared model: evidence %v, %v", ev, err)
	}
	dir := t.TempDir()
	stores := map[string]*expert.SampleStore{}
	for _, name := range []string{"evidence", "bindings", "disputed"} {
		if stores[name], err = expert.OpenSampleStore(filepath.Join(dir, name), 0); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := expert.EncodeEvidence(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores["evidence"].Put(ev.Batch.ID(), enc); err != nil {
		t.Fatal(err)
	}
	b, err := expert.EncodeBinding(expert.BindingOf(&u, acct(dn.buyer), digest))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores["bindings"].Put(ev.Ref().ReceiptHash, b); err != nil {
		t.Fatal(err)
	}
	dn.waitSettledAt(dn.net.Nodes[1], acct(dn.buyer), digest)
	d, err := provider.NewExpertDisputer(provider.ExpertDisputerConfig{Evidence: stores["evidence"], Bindings: stores["bindings"],
		Disputed: stores["disputed"], Chain: dn.net.Nodes[1], Account: dn.sub(dn.dis), Bond: 1000, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	before := dn.balance(dn.dis)
	for round := range 2 {
		if d.Round(dn.ctx); d.Stats() != (provider.DisputeStats{Refused: 1}) {
			t.Fatalf("round %d without a possible committee: %+v, want one refusal and no retry", round, d.Stats())
		}
	}
	open, err := ev.DisputeOpen(acct(dn.buyer), digest, u.ReceiptHashes(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dn.sub(dn.dis).Submit(dn.ctx, open); ledger.CodeOf(err) != ledger.CodeNoCommittee {
		t.Fatalf("a dispute no committee can judge: %v, want code %d (%s)", err, ledger.CodeNoCommittee, ledger.CodeNoCommittee)
	}
	if _, ok, err := dn.net.Nodes[0].Dispute(dn.ctx, ledger.DisputeID(open.Subject)); err != nil || ok {
		t.Fatalf("a refused dispute exists on chain: %v %v", ok, err)
	}
	if got := dn.balance(dn.dis); got != before {
		t.Fatalf("disputer's balance %d after the refusals, was %d: its bond (or a fee) was taken", got, before)
	}
}

package ledger_test

import (
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestNameBind: the first operator with a bonded provider to bind a name
// owns it; rebinding it to another ID is refused, the same ID again is a
// no-op; operators without a bonded provider and bad names are refused.
func TestNameBind(t *testing.T) {
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	other, goth := ledgertest.Signer(testChain, "other", 10_000)
	idle, gidle := ledgertest.Signer(testChain, "idle", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gop, goth, gidle)
	p, q := newMachine(t), newMachine(t)
	c.mustApply(c.SignAt(op, 0, p.register(t, op, 1000, 60)), c.SignAt(other, 0, q.register(t, other, 1000, 60)))
	model, model2 := terms.Hash32{0xd1}, terms.Hash32{0xd2}
	bind := func(name string, id terms.Hash32, m *machine) *ledger.NameBind {
		return &ledger.NameBind{Name: name, ModelID: id, MachineID: m.machineID()}
	}
	c.mustApply(c.SignAt(op, 1, bind("tenzro-devnet", model, p)))
	want := ledger.NameRecord{Name: "tenzro-devnet", ModelID: model, Operator: op.Account(), MachineID: p.machineID(), Height: c.l.Height()}
	var got ledger.NameRecord
	if !c.get(ledger.KeyName("tenzro-devnet"), &got) || got != want {
		t.Fatalf("name record %+v, want %+v", got, want)
	}
	// The same binding again, by its owner or anyone bonded, changes nothing.
	c.mustApply(c.SignAt(op, 2, bind("tenzro-devnet", model, p)), c.SignAt(other, 1, bind("tenzro-devnet", model, q)))
	if !c.get(ledger.KeyName("tenzro-devnet"), &got) || got != want {
		t.Fatalf("name record after same binding %+v, want %+v", got, want)
	}
	wantCodes(t, c, [][]byte{
		c.SignAt(other, 2, bind("tenzro-devnet", model2, q)),
		c.SignAt(op, 3, bind("tenzro-devnet", model2, p)),
		c.SignAt(idle, 0, bind("idle-model", model, p)),
		c.SignAt(idle, 0, &ledger.NameBind{Name: "idle-model", ModelID: model}),
		c.SignAt(op, 3, bind("has space", model, p)),
		c.SignAt(op, 3, bind("", model, p)),
		c.SignAt(op, 3, bind(strings.Repeat("a", 65), model, p)),
		c.SignAt(op, 3, bind("a/b", model, p)),
		c.SignAt(op, 3, bind("modèle", model, p)),
		c.SignAt(op, 3, bind("zero-id", terms.Hash32{}, p)),
	}, ledger.CodeNameTaken, ledger.CodeNameTaken, ledger.CodeNoProvider, ledger.CodeNoProvider,
		ledger.CodeMalformed, ledger.CodeMalformed, ledger.CodeMalformed, ledger.CodeMalformed, ledger.CodeMalformed, ledger.CodeMalformed)
	c.mustApply(c.SignAt(op, 3, bind(strings.Repeat("a", 64), model2, p)))
	// An unbonding provider no longer entitles its operator to bind names.
	c.mustApply(c.SignAt(other, 2, &ledger.ProviderUnbond{MachineID: q.machineID()}))
	wantCodes(t, c, [][]byte{c.SignAt(other, 3, bind("late", model2, q))}, ledger.CodeNoProvider)
}

// TestNameRebindByGovernance: a name proposal rebinds a taken name once
// > 2/3 of validator power votes yes, and a zero model ID removes it.
func TestNameRebindByGovernance(t *testing.T) {
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 4, gop)
	p := newMachine(t)
	c.mustApply(c.SignAt(op, 0, p.register(t, op, 1000, 60)))
	c.mustApply(c.SignAt(op, 1, &ledger.NameBind{Name: "tenzro-devnet", ModelID: terms.Hash32{1}, MachineID: p.machineID()}))
	wantCodes(t, c, [][]byte{c.SignAt(op, 2, &ledger.NameProposal{Name: "tenzro-devnet", ModelID: terms.Hash32{2}})}, ledger.CodeNotValidator)
	paramsBefore := c.params()
	c.mustApply(c.sign(c.Vals[0], &ledger.NameProposal{Name: "tenzro-devnet", ModelID: terms.Hash32{2}}))
	c.mustApply(c.sign(c.Vals[1], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	var got ledger.NameRecord
	if c.get(ledger.KeyName("tenzro-devnet"), &got); got.ModelID != (terms.Hash32{1}) {
		t.Fatalf("rebound with 2 of 4 votes: %+v", got)
	}
	c.mustApply(c.sign(c.Vals[2], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	if !c.get(ledger.KeyName("tenzro-devnet"), &got) || got.ModelID != (terms.Hash32{2}) || got.Operator != (terms.AccountID{}) {
		t.Fatalf("after 3 of 4 votes: %+v, want model 02.. bound by governance", got)
	}
	if c.params() != paramsBefore {
		t.Fatal("a name proposal changed the parameters")
	}
	// Governance can unbind; then the name is free for the first bonded operator again.
	c.mustApply(c.sign(c.Vals[0], &ledger.NameProposal{Name: "tenzro-devnet"}))
	c.mustApply(c.sign(c.Vals[1], &ledger.ParamVote{ProposalID: 1, Approve: true}))
	c.mustApply(c.sign(c.Vals[2], &ledger.ParamVote{ProposalID: 1, Approve: true}))
	if c.get(ledger.KeyName("tenzro-devnet"), &got) {
		t.Fatalf("name still bound after an unbinding proposal: %+v", got)
	}
	c.mustApply(c.SignAt(op, 2, &ledger.NameBind{Name: "tenzro-devnet", ModelID: terms.Hash32{3}, MachineID: p.machineID()}))
}

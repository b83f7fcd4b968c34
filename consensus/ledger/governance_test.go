package ledger_test

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// TestProposalNeedsTwoThirds: with 4 equal validators a proposal passes
// on the third yes (3/4 > 2/3) and not before; no votes do not count.
func TestProposalNeedsTwoThirds(t *testing.T) {
	outsider, gOut := ledgertest.Signer(testChain, "outsider", 10)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 4, gOut)
	next := ledgertest.Params()
	next.SurchargeTEE = 777
	next.HourSeconds = 60
	c.mustApply(c.sign(c.Vals[0], &ledger.ParamProposal{Params: next}))
	var prop ledger.Proposal
	if !c.get(ledger.KeyProposal(0), &prop) || prop.YesPower != 10 || prop.Passed {
		t.Fatalf("proposal after proposer: %+v", prop)
	}
	c.mustApply(c.sign(c.Vals[1], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	c.mustApply(c.sign(c.Vals[2], &ledger.ParamVote{ProposalID: 0, Approve: false}))
	if p := c.params(); p.SurchargeTEE == 777 {
		t.Fatal("params changed with 2 of 4 yes votes")
	}
	res := c.block(
		c.sign(c.Vals[1], &ledger.ParamVote{ProposalID: 0, Approve: true}),
		c.sign(outsider, &ledger.ParamVote{ProposalID: 0, Approve: true}),
		c.sign(c.Vals[3], &ledger.ParamVote{ProposalID: 9, Approve: true}),
	)
	want := []ledger.Code{ledger.CodeAlreadyVoted, ledger.CodeNotValidator, ledger.CodeUnknownProposal}
	for i, w := range want {
		if got := res.Txs[i].Code; got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.Txs[i].Log, w)
		}
	}
	c.mustApply(c.sign(c.Vals[3], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	if p := c.params(); p != next {
		t.Fatalf("params after 3 of 4 yes: %+v, want %+v", p, next)
	}
	res = c.block(c.sign(c.Vals[2], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	if got := res.Txs[0].Code; got != ledger.CodeProposalClosed {
		t.Fatalf("vote on passed proposal: %v, want proposal closed", got)
	}
	bad := next
	bad.StandingAvailBP = 9000
	res = c.block(c.sign(c.Vals[0], &ledger.ParamProposal{Params: bad}))
	if got := res.Txs[0].Code; got != ledger.CodeInvalidParams {
		t.Fatalf("invalid proposal: %v, want invalid params", got)
	}
}

// TestProposalExpires: votes after the voting period are refused.
func TestProposalExpires(t *testing.T) {
	p := ledgertest.Params()
	p.VotingPeriodBlocks = 2
	c := newChain(t, "", genesisTime, p, 4)
	c.mustApply(c.sign(c.Vals[0], &ledger.ParamProposal{Params: p}))
	c.block()
	c.block()
	res := c.block(c.sign(c.Vals[1], &ledger.ParamVote{ProposalID: 0, Approve: true}))
	if got := res.Txs[0].Code; got != ledger.CodeProposalClosed {
		t.Fatalf("late vote: %v, want proposal closed", got)
	}
}

func TestValidatorStakeUpdates(t *testing.T) {
	newVal, gn := ledgertest.Signer(testChain, "newval", 50*ledger.PowerUnit)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gn)
	cons := ledgertest.SeedKey("newcons", 0).Public().(ed25519.PublicKey)
	res := c.mustApply(c.sign(newVal, &ledger.ValidatorStake{ConsPubKey: cons, Amount: 20 * ledger.PowerUnit}))
	if u := res.Changes; len(u) != 1 || u[0].Power != 20 || !bytes.Equal(u[0].PubKey, cons) {
		t.Fatalf("updates after stake: %+v", u)
	}
	res = c.mustApply(c.sign(newVal, &ledger.ValidatorUnstake{Amount: 15 * ledger.PowerUnit}))
	if u := res.Changes; len(u) != 1 || u[0].Power != 5 {
		t.Fatalf("updates after unstake: %+v", u)
	}
	if a := c.account(newVal.Account()); a.Balance != 45*ledger.PowerUnit {
		t.Fatalf("balance after unstake: %d", a.Balance)
	}
	res = c.block(
		c.SignAt(newVal, 2, &ledger.ValidatorUnstake{Amount: 6 * ledger.PowerUnit}),
		c.SignAt(c.Vals[0], 0, &ledger.ValidatorStake{ConsPubKey: cons, Amount: 1}),
	)
	for i, w := range []ledger.Code{ledger.CodeOverdraft, ledger.CodeDuplicate} {
		if got := res.Txs[i].Code; got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.Txs[i].Log, w)
		}
	}
	// The failed txs consumed their nonces (2 and 0).
	c.mustApply(c.SignAt(c.Vals[0], 1, &ledger.ValidatorUnstake{Amount: 10 * ledger.PowerUnit}))
	res = c.block(c.SignAt(newVal, 3, &ledger.ValidatorUnstake{Amount: 5 * ledger.PowerUnit}))
	if got := res.Txs[0].Code; got != ledger.CodeLastValidator {
		t.Fatalf("removing the last validator: %v, want last validator", got)
	}
}

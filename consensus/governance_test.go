package consensus_test

import (
	"bytes"
	"crypto/ed25519"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
)

// TestProposalNeedsTwoThirds: with 4 equal validators a proposal passes
// on the third yes (3/4 > 2/3) and not before; no votes do not count.
func TestProposalNeedsTwoThirds(t *testing.T) {
	outsider, gOut := signer("outsider", 10)
	c := newChain(t, "", genesisTime, testParams(), 4, gOut)
	next := testParams()
	next.SurchargeTEE = 777
	next.HourSeconds = 60
	c.mustApply(c.sign(c.vals[0], &consensus.ParamProposal{Params: next}))
	params := func() consensus.Params {
		var p consensus.Params
		c.query("params", &p)
		return p
	}
	var prop consensus.Proposal
	if !c.query("proposal/0", &prop) || prop.YesPower != 10 || prop.Passed {
		t.Fatalf("proposal after proposer: %+v", prop)
	}
	c.mustApply(c.sign(c.vals[1], &consensus.ParamVote{ProposalID: 0, Approve: true}))
	c.mustApply(c.sign(c.vals[2], &consensus.ParamVote{ProposalID: 0, Approve: false}))
	if p := params(); p.SurchargeTEE == 777 {
		t.Fatal("params changed with 2 of 4 yes votes")
	}
	res := c.block(
		c.sign(c.vals[1], &consensus.ParamVote{ProposalID: 0, Approve: true}),
		c.sign(outsider, &consensus.ParamVote{ProposalID: 0, Approve: true}),
		c.sign(c.vals[3], &consensus.ParamVote{ProposalID: 9, Approve: true}),
	)
	want := []consensus.Code{consensus.CodeAlreadyVoted, consensus.CodeNotValidator, consensus.CodeUnknownProposal}
	for i, w := range want {
		if got := consensus.Code(res.TxResults[i].Code); got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.TxResults[i].Log, w)
		}
	}
	c.mustApply(c.sign(c.vals[3], &consensus.ParamVote{ProposalID: 0, Approve: true}))
	if p := params(); p != next {
		t.Fatalf("params after 3 of 4 yes: %+v, want %+v", p, next)
	}
	res = c.block(c.sign(c.vals[2], &consensus.ParamVote{ProposalID: 0, Approve: true}))
	if got := consensus.Code(res.TxResults[0].Code); got != consensus.CodeProposalClosed {
		t.Fatalf("vote on passed proposal: %v, want proposal closed", got)
	}
	bad := next
	bad.StandingAvailBP = 9000
	res = c.block(c.sign(c.vals[0], &consensus.ParamProposal{Params: bad}))
	if got := consensus.Code(res.TxResults[0].Code); got != consensus.CodeInvalidParams {
		t.Fatalf("invalid proposal: %v, want invalid params", got)
	}
}

// TestProposalExpires: votes after the voting period are refused.
func TestProposalExpires(t *testing.T) {
	p := testParams()
	p.VotingPeriodBlocks = 2
	c := newChain(t, "", genesisTime, p, 4)
	c.mustApply(c.sign(c.vals[0], &consensus.ParamProposal{Params: p}))
	c.block()
	c.block()
	res := c.block(c.sign(c.vals[1], &consensus.ParamVote{ProposalID: 0, Approve: true}))
	if got := consensus.Code(res.TxResults[0].Code); got != consensus.CodeProposalClosed {
		t.Fatalf("late vote: %v, want proposal closed", got)
	}
}

func TestValidatorStakeUpdates(t *testing.T) {
	newVal, gn := signer("newval", 50*consensus.PowerUnit)
	c := newChain(t, "", genesisTime, testParams(), 1, gn)
	cons := seedKey("newcons", 0).Public().(ed25519.PublicKey)
	res := c.mustApply(c.sign(newVal, &consensus.ValidatorStake{ConsPubKey: cons, Amount: 20 * consensus.PowerUnit}))
	if u := res.ValidatorUpdates; len(u) != 1 || u[0].Power != 20 || !bytes.Equal(u[0].PubKeyBytes, cons) || u[0].PubKeyType != "ed25519" {
		t.Fatalf("updates after stake: %+v", u)
	}
	res = c.mustApply(c.sign(newVal, &consensus.ValidatorUnstake{Amount: 15 * consensus.PowerUnit}))
	if u := res.ValidatorUpdates; len(u) != 1 || u[0].Power != 5 {
		t.Fatalf("updates after unstake: %+v", u)
	}
	if a := c.account(newVal.Account()); a.Balance != 45*consensus.PowerUnit {
		t.Fatalf("balance after unstake: %d", a.Balance)
	}
	res = c.block(
		c.signAt(newVal, 2, &consensus.ValidatorUnstake{Amount: 6 * consensus.PowerUnit}),
		c.signAt(c.vals[0], 0, &consensus.ValidatorStake{ConsPubKey: cons, Amount: 1}),
	)
	for i, w := range []consensus.Code{consensus.CodeOverdraft, consensus.CodeDuplicate} {
		if got := consensus.Code(res.TxResults[i].Code); got != w {
			t.Errorf("tx %d: %v (%s), want %v", i, got, res.TxResults[i].Log, w)
		}
	}
	c.mustApply(c.signAt(c.vals[0], 0, &consensus.ValidatorUnstake{Amount: 10 * consensus.PowerUnit}))
	res = c.block(c.signAt(newVal, 2, &consensus.ValidatorUnstake{Amount: 5 * consensus.PowerUnit}))
	if got := consensus.Code(res.TxResults[0].Code); got != consensus.CodeLastValidator {
		t.Fatalf("removing the last validator: %v, want last validator", got)
	}
}

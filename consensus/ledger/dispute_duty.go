package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DutyAction is what a committee member must do next on a dispute.
type DutyAction uint8

// Duty actions.
const (
	DutyCommit DutyAction = 1 // re-execute, then commit to a verdict by CommitEnd
	DutyReveal DutyAction = 2 // reveal the committed verdict by RevealEnd
)

// String names the action.
func (a DutyAction) String() string {
	if n, ok := enumName(uint8(a), "", "commit", "reveal"); ok {
		return n
	}
	return "none"
}

// MarshalText names the action in JSON.
func (a DutyAction) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Duty is one thing a validator's committee duty must do at a height:
// everything a member needs besides the evidence (DisputeEvidence under
// the same ID): the dispute, the accused machine, the model whose weights
// re-execute the answer, the round and its deadline.
type Duty struct {
	Dispute  terms.Hash32       `json:"dispute"`
	Round    uint8              `json:"round"`
	Action   DutyAction         `json:"action"`
	Model    terms.Hash32       `json:"model"`
	Provider identity.MachineID `json:"provider"`
	Deadline int64              `json:"deadline"` // last height the action is accepted at
}

// MemberDuties lists what validator me must still do at height (the
// height of the block its transaction would land in) on the disputes ds:
// commit while the commit phase is open and it has not committed; reveal
// once reveals are open (the reveal phase, or as soon as every member
// committed) when it committed and has not revealed. A member
// without the weights should commit and reveal VerdictAbstain, so its
// abstention is on record.
func MemberDuties(ds []Dispute, me terms.AccountID, height int64) []Duty {
	var out []Duty
	for i := range ds {
		d := &ds[i]
		cur := d.Current()
		if d.Status != DisputeVoting || cur == nil {
			continue
		}
		for _, m := range cur.Members {
			if m.Validator != me {
				continue
			}
			duty := Duty{Dispute: d.ID, Round: cur.Round, Model: d.Model, Provider: d.Provider}
			switch {
			case height <= cur.CommitEnd && m.Commitment == (terms.Hash32{}):
				duty.Action, duty.Deadline = DutyCommit, cur.CommitEnd
			case cur.RevealsOpen(height) && m.Commitment != (terms.Hash32{}) && m.Vote == VerdictNone:
				duty.Action, duty.Deadline = DutyReveal, cur.RevealEnd
			default:
				continue
			}
			out = append(out, duty)
		}
	}
	return out
}

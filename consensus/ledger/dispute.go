package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Dispute domains and bounds.
const (
	DisputeIDDomain   = "tenzro/v1/dispute"
	DisputeVoteDomain = "tenzro/v1/dispute-vote"
	committeeDomain   = "tenzro/v1/committee"
	// MaxCommittee bounds the governed committee size k.
	MaxCommittee = 100
	// MaxActiveDisputes bounds the disputes open at once: every block
	// looks at each of them, so they must stay few.
	MaxActiveDisputes = 64
)

// DisputeStatus is where a dispute stands.
type DisputeStatus uint8

// Dispute statuses.
const (
	DisputeDrawing  DisputeStatus = 1 // waiting for the block whose hash seeds its committee
	DisputeVoting   DisputeStatus = 2
	DisputeGuilty   DisputeStatus = 3
	DisputeInnocent DisputeStatus = 4
	DisputeLapsed   DisputeStatus = 5 // no verdict in two rounds: the bond went back
)

// String names the status.
func (s DisputeStatus) String() string {
	if n, ok := enumName(uint8(s), "", "drawing", "voting", "guilty", "innocent", "lapsed"); ok {
		return n
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// MarshalText names the status in JSON.
func (s DisputeStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a status name.
func (s *DisputeStatus) UnmarshalText(b []byte) error {
	v, err := ParseDisputeStatus(string(b))
	*s = v
	return err
}

// ParseDisputeStatus parses a status name.
func ParseDisputeStatus(name string) (DisputeStatus, error) {
	for s := DisputeDrawing; s <= DisputeLapsed; s++ {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("ledger: dispute status %q: want drawing, voting, guilty, innocent or lapsed", name)
}

// Resolved reports whether the dispute is over.
func (s DisputeStatus) Resolved() bool { return s >= DisputeGuilty }

// CommitteeMember is one validator on a dispute committee, with the power
// it was drawn with and its vote. Against marks a revealed guilty or
// innocent vote the committee's verdict went against.
type CommitteeMember struct {
	Validator  terms.AccountID `cbor:"1,keyasint" json:"validator"`
	Power      int64           `cbor:"2,keyasint" json:"power"`
	Commitment terms.Hash32    `cbor:"3,keyasint,omitempty" json:"commitment,omitzero"`
	Vote       Verdict         `cbor:"4,keyasint,omitempty" json:"vote"`
	Against    bool            `cbor:"5,keyasint,omitempty" json:"against,omitempty"`
}

// DisputeRound is one committee draw: commits are accepted at heights
// DrawHeight..CommitEnd, reveals CommitEnd+1..RevealEnd, or from the
// block after every member committed (RevealsOpen).
type DisputeRound struct {
	Round      uint8             `cbor:"1,keyasint" json:"round"`
	Seed       terms.Hash32      `cbor:"2,keyasint" json:"seed"`
	DrawHeight int64             `cbor:"3,keyasint" json:"draw_height"`
	CommitEnd  int64             `cbor:"4,keyasint" json:"commit_end"`
	RevealEnd  int64             `cbor:"5,keyasint" json:"reveal_end"`
	Members    []CommitteeMember `cbor:"6,keyasint" json:"members"`
}

// Dispute is a dispute as stored (its evidence is under KeyDisputeEvidence).
// Operator is the accused provider's operator, never on a committee.
// Credited is what the disputed record paid the operator (price less the
// record fee); a conviction refunds the whole price (Reversed) to the
// escrow of (Payer, Settler): that credit as far as the operator holds
// it, the rest out of the slash (Refunded).
type Dispute struct {
	ID            terms.Hash32       `cbor:"1,keyasint" json:"id"`
	Subject       DisputeSubject     `cbor:"2,keyasint" json:"subject"`
	Disputer      terms.AccountID    `cbor:"3,keyasint" json:"disputer"`
	Bond          uint64             `cbor:"4,keyasint" json:"bond"`
	Provider      identity.MachineID `cbor:"5,keyasint" json:"provider"`
	Operator      terms.AccountID    `cbor:"6,keyasint" json:"operator"`
	Model         terms.Hash32       `cbor:"7,keyasint" json:"model"`
	Settler       terms.AccountID    `cbor:"8,keyasint" json:"settler"`
	Credited      uint64             `cbor:"9,keyasint" json:"credited"`
	OpenHeight    int64              `cbor:"10,keyasint" json:"open_height"`
	Status        DisputeStatus      `cbor:"11,keyasint" json:"status"`
	Rounds        []DisputeRound     `cbor:"12,keyasint" json:"rounds"`
	ResolveHeight int64              `cbor:"13,keyasint,omitempty" json:"resolve_height,omitempty"`
	Slashed       uint64             `cbor:"14,keyasint,omitempty" json:"slashed"`
	Reward        uint64             `cbor:"15,keyasint,omitempty" json:"reward"`
	Burned        uint64             `cbor:"16,keyasint,omitempty" json:"burned"`
	Reversed      uint64             `cbor:"17,keyasint,omitempty" json:"reversed"`
	// Refunded is the part of Slashed paid to the buyer's escrow, out of
	// what would have been burned (the record fee, and any credit the
	// operator no longer held): Slashed = Reward + Burned + Refunded.
	Refunded uint64 `cbor:"18,keyasint,omitempty" json:"refunded,omitempty"`
}

// Current is the dispute's latest round, nil before the first draw.
func (d *Dispute) Current() *DisputeRound {
	if len(d.Rounds) == 0 {
		return nil
	}
	return &d.Rounds[len(d.Rounds)-1]
}

// ModelHolders is the sorted list of validators that declared a model's
// weights (KeyModelHolders).
type ModelHolders struct {
	Validators []terms.AccountID `cbor:"1,keyasint" json:"validators"`
}

// ActiveDisputes lists the disputes not yet resolved, in opening order.
type ActiveDisputes struct {
	IDs []terms.Hash32 `cbor:"1,keyasint" json:"ids"`
}

// Supply accounts for money that left circulation: Burned is the sum of
// every slashed amount not paid to a disputer.
type Supply struct {
	Burned uint64 `cbor:"1,keyasint" json:"burned"`
}

// State keys of disputes.
var (
	keyActiveDisputes = []byte("j/active")
	keySupply         = []byte("m/supply")
)

// KeySupply is the state key of the Supply.
func KeySupply() []byte { return keySupply }

// KeyActiveDisputes is the state key of the ActiveDisputes.
func KeyActiveDisputes() []byte { return keyActiveDisputes }

// KeyDispute is the state key of a dispute: "d/" ‖ ID.
func KeyDispute(id terms.Hash32) []byte { return cat("d/", id[:]) }

// DisputePrefix is the key prefix of every dispute.
func DisputePrefix() []byte { return []byte("d/") }

// KeyDisputeEvidence is the state key of a dispute's evidence: "o/" ‖ ID.
func KeyDisputeEvidence(id terms.Hash32) []byte { return cat("o/", id[:]) }

// KeyModelHolders is the state key of a model's declared holders: "b/" ‖ model.
func KeyModelHolders(model terms.Hash32) []byte { return cat("b/", model[:]) }

// DisputeID is the ID of the dispute over subject: SHA-256(DisputeIDDomain
// ‖ canonical CBOR of the subject). A subject is disputed at most once;
// an expert batch's ID leaves out the record that paid for it, so a batch
// is disputed at most once whichever record lists its receipt.
func DisputeID(s DisputeSubject) terms.Hash32 {
	if s.Kind == SubjectExpertBatch {
		s.Payer, s.RequestDigest = terms.AccountID{}, terms.Hash32{}
	}
	b, err := cborx.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("ledger: encode dispute subject: %v", err)) // plain structs always encode
	}
	return sha256.Sum256(cat(DisputeIDDomain+"\x00", b))
}

// VoteCommitment is what a member commits to before revealing: SHA-256 of
// DisputeVoteDomain ‖ dispute ID ‖ round ‖ voter ‖ verdict ‖ salt. The
// voter is inside, so no member can submit another's commitment as its own.
func VoteCommitment(id terms.Hash32, round uint8, voter terms.AccountID, v Verdict, salt terms.Hash32) terms.Hash32 {
	return sha256.Sum256(cat(DisputeVoteDomain, id[:], []byte{round}, voter[:], []byte{byte(v)}, salt[:]))
}

// Candidate is a validator eligible for a committee, weighted by power
// (stake / PowerUnit).
type Candidate struct {
	Validator terms.AccountID
	Power     int64
}

// DrawCommittee draws min(k, len(eligible)) distinct candidates without
// replacement, each draw weighted by power among those left, from a
// stream of SHA-256(committeeDomain ‖ seed ‖ round ‖ counter) values. It
// sorts the candidates by account first, so the draw depends only on the
// set, and is the same on every node. Candidates of power ≤ 0 are never
// drawn.
func DrawCommittee(seed terms.Hash32, round uint8, eligible []Candidate, k int) []Candidate {
	pool := make([]Candidate, 0, len(eligible))
	var total uint64
	for _, c := range eligible {
		if c.Power > 0 {
			pool = append(pool, c)
			total += uint64(c.Power) // powers are at most 2^40 each (genesis and PowerUnit bound them)
		}
	}
	slices.SortFunc(pool, func(a, b Candidate) int { return bytes.Compare(a.Validator[:], b.Validator[:]) })
	var out []Candidate
	var ctr uint64
	next := func(bound uint64) uint64 {
		// Rejection sampling: values past the last whole multiple of
		// bound would favour small results.
		limit := math.MaxUint64 - math.MaxUint64%bound
		for {
			h := sha256.Sum256(cat(committeeDomain, seed[:], []byte{round}, u64(ctr)))
			ctr++
			if x := binary.BigEndian.Uint64(h[:8]); x < limit {
				return x % bound
			}
		}
	}
	for len(out) < k && len(pool) > 0 {
		x := next(total)
		i := 0
		for ; x >= nonNeg(pool[i].Power); i++ {
			x -= nonNeg(pool[i].Power)
		}
		out = append(out, pool[i])
		total -= nonNeg(pool[i].Power)
		pool = slices.Delete(pool, i, i+1)
	}
	return out
}

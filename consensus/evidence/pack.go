package evidence

import (
	"encoding/json"
	"fmt"
	"os"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FormatPack identifies the pack format; Verify refuses any other.
const FormatPack = "tenzro-evidence-pack/v1"

// MaxPackBytes bounds a pack file ReadFile accepts.
const MaxPackBytes = 256 << 20

// Pack is an evidence pack. Its JSON form is the file format: byte strings
// are hex (IDs, digests, app hash) or base64 (proof keys, values, nodes);
// signed_header and validators are in CometBFT's JSON encoding.
type Pack struct {
	Format  string          `json:"format"`
	ChainID string          `json:"chain_id"`
	Account terms.AccountID `json:"account"` // the payer (zero in a provider pack)
	// Machine, when set, makes this a provider pack: Records are every
	// record settled to this machine, of any payer, proven over the
	// provider index (consensus.VerifyRecordRange).
	Machine    *identity.MachineID    `json:"machine,omitempty"`
	FromHeight int64                  `json:"from_height"` // first settlement height covered
	ToHeight   int64                  `json:"to_height"`   // last one; the proofs are against the state after it
	AppHash    terms.Hash32           `json:"app_hash"`    // state root after ToHeight = header AppHash
	Records    []ledger.SettledRecord `json:"records"`     // in index order: by height, then request digest
	Proof      consensus.RangeProof   `json:"proof"`

	// SignedHeader is block ToHeight+1's header and a commit for it;
	// Validators is that block's validator set.
	SignedHeader *cmttypes.SignedHeader `json:"-"`
	Validators   *cmttypes.ValidatorSet `json:"-"`
}

// MarshalJSON encodes the pack in its file format.
func (p *Pack) MarshalJSON() ([]byte, error) {
	type plain Pack // drops the methods, so no recursion
	out := struct {
		*plain
		SignedHeader json.RawMessage `json:"signed_header"`
		Validators   json.RawMessage `json:"validators"`
	}{plain: (*plain)(p)}
	var err error
	if out.SignedHeader, err = cmtjson.Marshal(p.SignedHeader); err != nil {
		return nil, fmt.Errorf("evidence: encode signed header: %w", err)
	}
	var vals []*cmttypes.Validator
	if p.Validators != nil {
		vals = p.Validators.Validators
	}
	if out.Validators, err = cmtjson.Marshal(vals); err != nil {
		return nil, fmt.Errorf("evidence: encode validators: %w", err)
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes the file format. It checks only the encoding;
// Verify checks the contents.
func (p *Pack) UnmarshalJSON(b []byte) error {
	type plain Pack
	in := struct {
		*plain
		SignedHeader json.RawMessage `json:"signed_header"`
		Validators   json.RawMessage `json:"validators"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	p.SignedHeader, p.Validators = nil, nil
	if len(in.SignedHeader) > 0 && string(in.SignedHeader) != "null" {
		var sh cmttypes.SignedHeader
		if err := cmtjson.Unmarshal(in.SignedHeader, &sh); err != nil {
			return fmt.Errorf("%w: signed header: %w", ErrFormat, err)
		}
		p.SignedHeader = &sh
	}
	if len(in.Validators) > 0 && string(in.Validators) != "null" {
		var vals []*cmttypes.Validator
		if err := cmtjson.Unmarshal(in.Validators, &vals); err != nil {
			return fmt.Errorf("%w: validators: %w", ErrFormat, err)
		}
		set, err := newValidatorSet(vals)
		if err != nil {
			return fmt.Errorf("%w: validators: %w", ErrFormat, err)
		}
		p.Validators = set
	}
	return nil
}

// WriteFile writes the pack as indented JSON, readable by ReadFile.
func (p *Pack) WriteFile(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: encode pack: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("evidence: write pack: %w", err)
	}
	return nil
}

// ReadFile reads a pack written by WriteFile.
func ReadFile(path string) (*Pack, error) {
	b, err := readBounded(path, MaxPackBytes)
	if err != nil {
		return nil, err
	}
	var p Pack
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("evidence: read pack %s: %w", path, err)
	}
	return &p, nil
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("evidence: %s is %d bytes, limit %d", path, st.Size(), limit)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	return b, nil
}

// newValidatorSet builds a CometBFT validator set (sorted as the chain
// sorts it) from untrusted input. CometBFT panics on duplicates, zero
// power or an oversized total, so those are refused first.
func newValidatorSet(vals []*cmttypes.Validator) (set *cmttypes.ValidatorSet, err error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("evidence: empty validator set")
	}
	seen := map[string]bool{}
	var total int64
	for i, v := range vals {
		if v == nil || v.PubKey == nil {
			return nil, fmt.Errorf("evidence: validator %d has no public key", i)
		}
		if err := v.ValidateBasic(); err != nil {
			return nil, fmt.Errorf("evidence: validator %d: %w", i, err)
		}
		if v.VotingPower <= 0 || v.VotingPower > cmttypes.MaxTotalVotingPower-total {
			return nil, fmt.Errorf("evidence: validator %d: power %d out of range", i, v.VotingPower)
		}
		if seen[string(v.Address)] {
			return nil, fmt.Errorf("evidence: validator %X listed twice", v.Address)
		}
		seen[string(v.Address)] = true
		total += v.VotingPower
	}
	defer func() {
		if r := recover(); r != nil {
			set, err = nil, fmt.Errorf("evidence: validator set: %v", r)
		}
	}()
	set = cmttypes.NewValidatorSet(vals)
	if err := set.ValidateBasic(); err != nil {
		return nil, fmt.Errorf("evidence: validator set: %w", err)
	}
	return set, nil
}

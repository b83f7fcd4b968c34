package evidence

import (
	"context"
	"encoding/json"
	"fmt"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus"
)

// FormatValidatorSet identifies a validator set file.
const FormatValidatorSet = "tenzro-validator-set/v1"

// ValidatorSet is a validator set an auditor trusts, with the chain it
// belongs to and the height it was taken at (0 for a genesis set).
type ValidatorSet struct {
	ChainID string
	Height  int64
	Set     *cmttypes.ValidatorSet
}

type validatorFile struct {
	Format     string          `json:"format"`
	ChainID    string          `json:"chain_id"`
	Height     int64           `json:"height"`
	Validators json.RawMessage `json:"validators"` // CometBFT JSON
}

// LoadValidatorSet reads a trusted validator set from a FormatValidatorSet
// file or from a CometBFT genesis.json (its validators and chain ID).
func LoadValidatorSet(path string) (ValidatorSet, error) {
	b, err := readBounded(path, 64<<20)
	if err != nil {
		return ValidatorSet{}, err
	}
	var f validatorFile
	if err := json.Unmarshal(b, &f); err != nil {
		return ValidatorSet{}, fmt.Errorf("evidence: validator file %s: %w", path, err)
	}
	if f.Format == FormatValidatorSet {
		var vals []*cmttypes.Validator
		if err := cmtjson.Unmarshal(f.Validators, &vals); err != nil {
			return ValidatorSet{}, fmt.Errorf("evidence: validator file %s: %w", path, err)
		}
		set, err := newValidatorSet(vals)
		if err != nil {
			return ValidatorSet{}, fmt.Errorf("evidence: validator file %s: %w", path, err)
		}
		return ValidatorSet{ChainID: f.ChainID, Height: f.Height, Set: set}, nil
	}
	if f.Format != "" {
		return ValidatorSet{}, fmt.Errorf("evidence: validator file %s: format %q, want %q or a genesis", path, f.Format, FormatValidatorSet)
	}
	doc, err := cmttypes.GenesisDocFromJSON(b)
	if err != nil {
		return ValidatorSet{}, fmt.Errorf("evidence: %s is neither a validator set nor a genesis: %w", path, err)
	}
	vals := make([]*cmttypes.Validator, len(doc.Validators))
	for i, gv := range doc.Validators {
		vals[i] = cmttypes.NewValidator(gv.PubKey, gv.Power)
	}
	set, err := newValidatorSet(vals)
	if err != nil {
		return ValidatorSet{}, fmt.Errorf("evidence: genesis %s: %w", path, err)
	}
	return ValidatorSet{ChainID: doc.ChainID, Set: set}, nil
}

// ExportValidatorSet returns the validator set of block height (0 = the
// latest) as the node knows it.
func ExportValidatorSet(ctx context.Context, node *consensus.Node, height int64) (ValidatorSet, error) {
	c := node.Client()
	if c == nil {
		return ValidatorSet{}, consensus.ErrNotStarted
	}
	var hp *int64
	if height > 0 {
		hp = &height
	}
	var (
		vals   []*cmttypes.Validator
		at     int64
		perPge = 100
	)
	for page := 1; ; page++ {
		res, err := c.Validators(ctx, hp, &page, &perPge)
		if err != nil {
			return ValidatorSet{}, fmt.Errorf("evidence: validators at %d: %w", height, err)
		}
		vals, at = append(vals, res.Validators...), res.BlockHeight
		if len(vals) >= res.Total || len(res.Validators) == 0 {
			break
		}
	}
	set, err := newValidatorSet(vals)
	if err != nil {
		return ValidatorSet{}, err
	}
	return ValidatorSet{ChainID: node.App().ChainID(), Height: at, Set: set}, nil
}

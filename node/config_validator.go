package node

import (
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/node/validator"
)

// ValidatorConfig is [validator]: what a chain validator brings to
// dispute committees.
type ValidatorConfig struct {
	// Models are [[validator.models]]: weights this validator holds,
	// declares on chain at start and re-executes disputed answers with.
	// A duty on a model not listed here abstains.
	Models []validator.ModelConfig `toml:"models"`
}

// Validate names each bad key.
func (v ValidatorConfig) Validate() error {
	var errs []error
	for i, m := range v.Models {
		if err := m.Validate(fmt.Sprintf("validator.models[%d]", i)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DisputeVotesFile is where a validator keeps its committed dispute
// verdicts and salts until it reveals them (relative to the home).
const DisputeVotesFile = "dispute-votes.json"

package validator

import (
	"errors"
	"fmt"
)

// FileConfig is the [validator] section of a node's config file: what a
// chain validator brings to dispute committees.
type FileConfig struct {
	// Models are [[validator.models]]: weights this validator holds,
	// declares on chain at start and re-executes disputed answers with.
	// A duty on a model not listed here abstains.
	Models []ModelConfig `toml:"models" comment:"Weights this validator holds: it declares them on chain at start, sits on dispute committees for the model and re-executes disputed answers with them (the directory is checked against the catalog ID, if set)."`
}

// Validate names each bad key.
func (v FileConfig) Validate() error {
	var errs []error
	for i, m := range v.Models {
		if err := m.Validate(fmt.Sprintf("validator.models[%d]", i)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

package evidence

import (
	"encoding/json"
	"fmt"
	"os"

	cmtjson "github.com/cometbft/cometbft/libs/json"
)

// WriteFile writes the set in FormatValidatorSet. No binary writes set
// files; the tests write them to show that LoadValidatorSet reads the
// format back.
func (v ValidatorSet) WriteFile(path string) error {
	if v.Set == nil {
		return fmt.Errorf("evidence: write validator set: empty set")
	}
	vals, err := cmtjson.Marshal(v.Set.Validators)
	if err != nil {
		return fmt.Errorf("evidence: encode validators: %w", err)
	}
	b, err := json.MarshalIndent(validatorFile{Format: FormatValidatorSet, ChainID: v.ChainID, Height: v.Height, Validators: vals}, "", "  ")
	if err != nil {
		return fmt.Errorf("evidence: encode validator set: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("evidence: write validator set: %w", err)
	}
	return nil
}

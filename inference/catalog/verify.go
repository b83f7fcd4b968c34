package catalog

import (
	"errors"
	"fmt"
)

// ErrMismatch is wrapped by every verification failure.
var ErrMismatch = errors.New("model files do not match the catalog")

// Verify rebuilds the manifest of dir and refuses it unless its root is want.
func Verify(dir string, want Hash) error {
	_, got, err := Build(dir)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("catalog: %s: model ID %s, want %s: %w", dir, got, want, ErrMismatch)
	}
	return nil
}

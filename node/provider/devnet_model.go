package provider

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// EnsureDevnetModel generates the devnet's model into dir unless a model is
// already there, and returns the directory's catalog ID (hex). Every
// provider of a devnet serves this one model, so they can stand in for one
// another.
func EnsureDevnetModel(dir string) (string, error) {
	return ensureModel(dir, modelgen.DevnetOptions(), "devnet model")
}

// ensureModel generates the model o describes in dir unless model.gguf is
// already there, and returns the directory's catalog ID (hex); errors are
// prefixed with what.
func ensureModel(dir string, o modelgen.GenOptions, what string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "model.gguf")); errors.Is(err, fs.ErrNotExist) {
		if err := modelgen.GenerateModel(dir, o); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	_, root, err := catalog.Build(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return root.String(), nil
}

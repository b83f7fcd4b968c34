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
	if _, err := os.Stat(filepath.Join(dir, "model.gguf")); errors.Is(err, fs.ErrNotExist) {
		if err := modelgen.GenerateModel(dir, modelgen.DevnetOptions()); err != nil {
			return "", fmt.Errorf("devnet model: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("devnet model: %w", err)
	}
	_, root, err := catalog.Build(dir)
	if err != nil {
		return "", fmt.Errorf("devnet model: %w", err)
	}
	return root.String(), nil
}

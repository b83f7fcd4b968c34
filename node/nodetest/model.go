package nodetest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// shared is the one generated model of a test binary.
var shared struct {
	once    sync.Once
	dir, id string
	err     error
}

// SharedModel returns the directory and catalog ID of a model that
// generate wrote once for this test binary (later calls reuse it, whatever
// generate they pass). CleanupShared removes it.
func SharedModel(t testing.TB, generate func(dir string) (id string, err error)) (dir, id string) {
	t.Helper()
	shared.once.Do(func() {
		d, err := os.MkdirTemp("", "tenzro-test-model")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = filepath.Join(d, "model")
		shared.id, shared.err = generate(shared.dir)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir, shared.id
}

// CleanupShared removes the shared model; TestMain calls it after the run.
func CleanupShared() {
	if shared.dir != "" {
		_ = os.RemoveAll(filepath.Dir(shared.dir))
	}
}

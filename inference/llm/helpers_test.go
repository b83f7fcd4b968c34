package llm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

var (
	modelsDir  string
	modelsMu   sync.Mutex
	modelsMade = map[string]string{}
)

func TestMain(m *testing.M) {
	var err error
	modelsDir, err = os.MkdirTemp("", "llm-test-models-")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(modelsDir)
	os.Exit(code)
}

// tinyOptions is a small model that runs a token in well under a millisecond.
func tinyOptions() modelgen.GenOptions {
	o := modelgen.DevnetOptions()
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
	return o
}

// model generates (once per test binary) the model for opts and returns its directory.
func model(t testing.TB, opts modelgen.GenOptions) string {
	t.Helper()
	key := fmt.Sprintf("%+v", opts)
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if dir, ok := modelsMade[key]; ok {
		return dir
	}
	dir := filepath.Join(modelsDir, fmt.Sprint(len(modelsMade)))
	if err := modelgen.GenerateModel(dir, opts); err != nil {
		t.Fatal(err)
	}
	modelsMade[key] = dir
	return dir
}

func open(t testing.TB, opts modelgen.GenOptions, eo llm.Options) *llm.Engine {
	t.Helper()
	e, err := llm.Open(model(t, opts), eo)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func withQuant(o modelgen.GenOptions, q gguf.Type) modelgen.GenOptions {
	o.Quant = q
	return o
}

func chat(text string) []inference.Message {
	return []inference.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: text}}
}

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// tinyQwen3 generates a small qwen3 model (as model gen would) and returns
// its directory.
func tinyQwen3(t *testing.T) string {
	t.Helper()
	o := modelgen.DevnetOptions()
	o.Arch, o.Layers, o.Dim, o.Heads, o.KVHeads, o.HeadDim, o.FFN, o.Vocab, o.Context = "qwen3", 2, 64, 4, 2, 32, 128, 600, 512
	dir := filepath.Join(t.TempDir(), "gen")
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

func inspectJSON(t *testing.T, path string) modelInfo {
	t.Helper()
	out, err := runCLI(t, "model", "inspect", "--json", path)
	if err != nil {
		t.Fatalf("inspect %s: %v\n%s", path, err, out)
	}
	var in modelInfo
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}
	return in
}

func TestModelImportAndInspect(t *testing.T) {
	gen := tinyQwen3(t)
	_, genRoot, err := catalog.Build(gen)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	out, err := runCLI(t, "model", "import", filepath.Join(gen, "model.gguf"), "--home", home, "--name", "tiny-qwen3")
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	dir := filepath.Join(home, "models", "tiny-qwen3")
	// The ID is the one model gen's directory has: the same file, the same layout.
	for _, want := range []string{"model id " + genRoot.String(), `dir = "models/tiny-qwen3"`, `id = "` + genRoot.String() + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "models")); len(entries) != 1 {
		t.Errorf("models/ holds %d entries, want only the model (no leftover temporary directory)", len(entries))
	}
	if out, err := runCLI(t, "model", "import", filepath.Join(gen, "model.gguf"), "--home", home, "--name", "tiny-qwen3"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second import into the same name: %v\n%s", err, out)
	}

	g, err := gguf.Open(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := g.String("tokenizer.chat_template")
	tensors := len(g.Tensors)
	g.Close()
	firstLine, _, _ := strings.Cut(tmpl, "\n")

	in := inspectJSON(t, dir)
	if in.ModelID != genRoot.String() || in.Architecture != "qwen3" || in.Layers != 2 || in.Heads != 4 || in.KVHeads != 2 ||
		in.HeadDim != 32 || in.Dim != 64 || in.FFN != 128 || in.Context != 512 || in.Engine != "ok" {
		t.Errorf("inspect dir: %+v", in)
	}
	if in.Quant["F32"] != tensors || len(in.Quant) != 1 || in.Params <= 0 {
		t.Errorf("quantization %v (%d params), want F32×%d", in.Quant, in.Params, tensors)
	}
	tk := in.Tokenizer
	if tk.Model != "gpt2" || tk.Vocab != 600 || tk.EOS == nil || tk.EOS.Text == "" || tk.Pre == "" {
		t.Errorf("tokenizer %+v eos %v", tk, tk.EOS)
	}
	if tmpl == "" || !in.Template.Present || in.Template.Bytes != len(tmpl) || in.Template.FirstLine != firstLine {
		t.Errorf("template %+v, want %d bytes starting %q", in.Template, len(tmpl), firstLine)
	}

	text, err := runCLI(t, "model", "inspect", filepath.Join(gen, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"architecture  qwen3", "layers        2, heads 4, kv heads 2", "tokenizer     gpt2", "engine        ok", "F32×"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "model id") {
		t.Errorf("a bare file has no catalog ID, yet:\n%s", text)
	}
}

// TestModelImportRefuses checks that what the engine cannot load is refused
// with its reason and leaves the home untouched.
func TestModelImportRefuses(t *testing.T) {
	gen := tinyQwen3(t)
	good, err := os.ReadFile(filepath.Join(gen, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	// output_norm.weight is F32; re-typed Q4_0 (ggml type 2) it still lies
	// inside the file, so only the engine's type check can refuse it.
	q40 := bytes.Clone(good)
	name := []byte("output_norm.weight")
	at := bytes.Index(q40, name) + len(name)
	nd := int(binary.LittleEndian.Uint32(q40[at:]))
	binary.LittleEndian.PutUint32(q40[at+4+8*nd:], 2)

	w := gguf.NewWriter()
	w.SetString("general.architecture", "mamba")
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b"})
	if err := w.AddTensor("token_embd.weight", gguf.TypeF32, []uint64{4, 2}, func(int, []float32) {}); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	mamba := filepath.Join(src, "mamba.gguf")
	if err := w.WriteFile(mamba); err != nil {
		t.Fatal(err)
	}
	q40Path := filepath.Join(src, "q40.gguf")
	if err := os.WriteFile(q40Path, q40, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, why string }{
		{mamba, `architecture "mamba"`},
		{q40Path, "output_norm.weight is Q4_0"},
	} {
		home := t.TempDir()
		out, err := runCLI(t, "model", "import", tc.path, "--home", home)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("import %s: %v, want a refusal naming %q\n%s", tc.path, err, tc.why, out)
		}
		if entries, _ := os.ReadDir(home); len(entries) != 0 {
			t.Errorf("refused import of %s wrote %d entries into the home", tc.path, len(entries))
		}
		if in := inspectJSON(t, tc.path); !strings.Contains(in.Engine, tc.why) {
			t.Errorf("inspect %s: engine %q, want it to name %q", tc.path, in.Engine, tc.why)
		}
	}
	help, err := runCLI(t, "model", "import", "--help")
	if err != nil || !strings.Contains(help, "HOME/models/NAME/model.gguf") || !strings.Contains(help, `dir = "models/NAME"`) {
		t.Errorf("import --help does not say where the model goes: %v\n%s", err, help)
	}
	for _, args := range [][]string{
		{filepath.Join(gen, "model.gguf")},
		{filepath.Join(gen, "model.gguf"), "--home", t.TempDir(), "--out", t.TempDir()},
		{filepath.Join(gen, "model.gguf"), "--home", t.TempDir(), "--name", "../up"},
	} {
		if out, err := runCLI(t, append([]string{"model", "import"}, args...)...); err == nil {
			t.Errorf("import %v succeeded:\n%s", args, out)
		}
	}
}

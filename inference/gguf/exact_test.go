package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// whitespaceTokens are vocabulary entries a trimming reader would empty and
// make collide (Gemma's vocabulary has such tokens).
var whitespaceTokens = []string{"\n", "\t", " ", "  x ", "", "\r\n", "\v\f"}

const spacedTemplate = "  {% for m in messages %}{{ m.content }}\n{% endfor %}\n"

// spaced writes a file whose strings carry leading and trailing whitespace.
func spaced(t testing.TB, dir string) string {
	t.Helper()
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetString("tokenizer.chat_template", spacedTemplate)
	w.SetString("general.name", " ")
	w.SetStrings("tokenizer.ggml.tokens", whitespaceTokens)
	w.SetStrings("tokenizer.ggml.merges", []string{"  \n", "\t \t"})
	if err := w.AddTensor("t", TypeF32, []uint64{4}, func(int, []float32) {}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "spaced.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStringsByteExact(t *testing.T) {
	f, err := Open(spaced(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	toks, ok, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil || !ok || !slices.Equal(toks, whitespaceTokens) {
		t.Fatalf("tokens = %q %v %v, want %q", toks, ok, err, whitespaceTokens)
	}
	merges, _, err := f.Strings("tokenizer.ggml.merges")
	if err != nil || !slices.Equal(merges, []string{"  \n", "\t \t"}) {
		t.Fatalf("merges = %q %v", merges, err)
	}
	for key, want := range map[string]string{"tokenizer.chat_template": spacedTemplate, "general.name": " ", "general.architecture": "llama"} {
		if s, ok, err := f.String(key); err != nil || !ok || s != want {
			t.Errorf("%s = %q %v %v, want %q", key, s, ok, err, want)
		}
	}
	if _, _, err := f.Strings("general.name"); err == nil {
		t.Error("a string read as a string array")
	}
	if _, _, err := f.String("tokenizer.ggml.tokens"); err == nil {
		t.Error("a string array read as a string")
	}
	toks[0] = "changed"
	if again, _, _ := f.Strings("tokenizer.ggml.tokens"); again[0] != "\n" {
		t.Error("Strings hands out the file's own slice")
	}
}

// TestExactWalkRefuses checks the header walk's own limits on lengths that
// the parser might tolerate or misread.
func TestExactWalkRefuses(t *testing.T) {
	good, err := os.ReadFile(spaced(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readExact(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("good file: %v", err)
	}
	patch := func(at int, b ...byte) []byte {
		out := slices.Clone(good)
		copy(out[at:], b)
		return out
	}
	ff := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	// The tokens array: key, type 9, item type 8, then its count.
	arr := bytes.Index(good, []byte("tokenizer.ggml.tokens")) + len("tokenizer.ggml.tokens") + 4 + 4
	tmpl := bytes.Index(good, []byte("tokenizer.chat_template")) + len("tokenizer.chat_template") + 4
	cases := map[string][]byte{
		"version 1":       patch(4, 1),
		"kv count":        patch(16, ff...),
		"tensor count":    patch(8, ff...),
		"array count":     patch(arr, ff...),
		"string length":   patch(tmpl, ff...),
		"value type":      patch(tmpl-4, 99),
		"nested array":    patch(arr-4, vtArray),
		"truncated":       good[:arr+20],
		"too short":       good[:6],
		"array count big": patch(arr, 0, 0, 0, 0, 1),
	}
	for name, b := range cases {
		if _, err := readExact(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

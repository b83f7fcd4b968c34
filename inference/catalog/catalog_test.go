package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeDir(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	files := map[string][]byte{
		"model.gguf":          make([]byte, 2*ChunkSize+12345),
		"tokenizer/vocab.txt": []byte("hello world\n"),
		"empty":               {},
	}
	for _, b := range files {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

func TestManifestShape(t *testing.T) {
	dir, _ := writeDir(t)
	m, root, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "empty,model.gguf,tokenizer/vocab.txt" {
		t.Fatalf("paths %v", paths)
	}
	if n := len(m.Files[1].Chunks); n != 3 || m.Files[1].Size != 2*ChunkSize+12345 || len(m.Files[0].Chunks) != 0 {
		t.Fatalf("chunks %d size %d", n, m.Files[1].Size)
	}
	if root != m.Root || root != m.ComputeRoot() {
		t.Fatal("root differs from the manifest's")
	}
	if len(m.LeafData()) != 1+3+3+1 {
		t.Fatalf("%d leaves", len(m.LeafData()))
	}
	// The manifest survives JSON and still verifies.
	js, _ := json.Marshal(m)
	var back Manifest
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.ComputeRoot() != root {
		t.Fatal("JSON round trip changed the root")
	}
	if err := Verify(dir, root); err != nil {
		t.Fatal(err)
	}
	if err := verifyManifest(dir, &back, root); err != nil {
		t.Fatal(err)
	}
	_, again, _ := Build(dir)
	if again != root {
		t.Fatal("root not deterministic")
	}
}

func TestFlippedByteChangesID(t *testing.T) {
	dir, files := writeDir(t)
	m, root, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for p, b := range files {
		if len(b) == 0 {
			continue
		}
		// First and last byte, both sides of every chunk boundary, and random bytes.
		offs := []int{0, len(b) - 1}
		for c := ChunkSize; c < len(b); c += ChunkSize {
			offs = append(offs, c-1, c)
		}
		for range 4 {
			offs = append(offs, rng.IntN(len(b)))
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		for _, off := range offs {
			b[off] ^= 0x01
			if err := os.WriteFile(full, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, got, err := Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got == root {
				t.Fatalf("%s byte %d flipped, same ID", p, off)
			}
			if err := Verify(dir, root); !errors.Is(err, ErrMismatch) {
				t.Fatalf("%s byte %d flipped: Verify = %v", p, off, err)
			}
			err = verifyManifest(dir, m, root)
			want := fmt.Sprintf("%s chunk %d ", p, off/ChunkSize)
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s byte %d flipped: verifyManifest = %v, want mention of %q", p, off, err, want)
			}
			b[off] ^= 0x01
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Verify(dir, root); err != nil {
		t.Fatalf("restored dir: %v", err)
	}
}

func TestStructureChangesID(t *testing.T) {
	dir, _ := writeDir(t)
	_, root, _ := Build(dir)
	if err := os.Rename(filepath.Join(dir, "empty"), filepath.Join(dir, "empty2")); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, root); !errors.Is(err, ErrMismatch) {
		t.Fatalf("renamed file: %v", err)
	}
	os.Rename(filepath.Join(dir, "empty2"), filepath.Join(dir, "empty"))
	if err := os.WriteFile(filepath.Join(dir, "extra"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, root); !errors.Is(err, ErrMismatch) {
		t.Fatalf("extra empty file: %v", err)
	}
	os.Remove(filepath.Join(dir, "extra"))
	if err := os.Truncate(filepath.Join(dir, "model.gguf"), 2*ChunkSize+12344); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, root); !errors.Is(err, ErrMismatch) {
		t.Fatalf("truncated file: %v", err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link")); err == nil {
		if _, _, err := Build(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("symlink: %v", err)
		}
	}
}

func TestChunkProofs(t *testing.T) {
	dir, files := writeDir(t)
	m, root, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for fi, f := range m.Files {
		data := files[f.Path]
		for c := range f.Chunks {
			idx, size, p, err := m.chunkProof(fi, c)
			if err != nil {
				t.Fatal(err)
			}
			chunk := data[c*ChunkSize : min((c+1)*ChunkSize, len(data))]
			if err := verifyChunk(root, fi, c, chunk, idx, size, p); err != nil {
				t.Fatalf("%s chunk %d: %v", f.Path, c, err)
			}
			bad := append([]byte{}, chunk...)
			bad[len(bad)/2] ^= 0x80
			if err := verifyChunk(root, fi, c, bad, idx, size, p); !errors.Is(err, ErrMismatch) {
				t.Fatalf("%s chunk %d tampered: %v", f.Path, c, err)
			}
		}
	}
	if _, _, _, err := m.chunkProof(0, 0); err == nil {
		t.Fatal("proof of a chunk of an empty file")
	}
}

package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to the loading path: Open, every metadata
// accessor and every tensor read and decode. It must return errors, never panic.
func FuzzOpen(f *testing.F) {
	path, _ := sample(f, f.TempDir())
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:200])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	spacedFile, err := os.ReadFile(spaced(f, f.TempDir()))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(spacedFile)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.gguf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := Open(p)
		if err != nil {
			return
		}
		defer g.Close()
		kept := 0
		for _, k := range g.keys() {
			s, _, _ := g.String(k)
			ss, _, _ := g.Strings(k)
			kept += len(s)
			for _, x := range ss {
				kept += len(x) + 8
			}
			g.Uint(k)
			g.Float(k)
			g.Bool(k)
			g.Float32s(k)
			g.Ints(k)
		}
		if kept > len(data) {
			t.Fatalf("strings of %d bytes from a %d-byte file", kept, len(data))
		}
		for _, ti := range g.Tensors {
			if ti.Offset+ti.Size > int64(len(data)) {
				t.Fatalf("tensor %q [%d,+%d) outside %d-byte file", ti.Name, ti.Offset, ti.Size, len(data))
			}
			raw, err := g.ReadTensor(ti, nil)
			if err != nil || !ti.Type.Supported() {
				continue
			}
			rb, err := ti.Type.RowBytes(ti.cols())
			if err != nil {
				continue
			}
			row := make([]float32, ti.cols())
			for r := 0; r < ti.rows(); r++ {
				if err := DecodeRow(row, ti.Type, raw[r*rb:(r+1)*rb]); err != nil {
					t.Fatalf("decode %q row %d: %v", ti.Name, r, err)
				}
			}
		}
	})
}

// FuzzReadExact feeds arbitrary bytes to the header walk that keeps strings
// exact, which Open runs only after the parser accepted the file: it must
// fail cleanly on its own, and what it keeps must fit in the input.
func FuzzReadExact(f *testing.F) {
	good, err := os.ReadFile(spaced(f, f.TempDir()))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := readExact(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		n := 0
		for _, s := range e.strs {
			n += len(s)
		}
		for _, ss := range e.arrs {
			for _, s := range ss {
				n += len(s) + 8
			}
		}
		if n > len(data) {
			t.Fatalf("kept %d string bytes from a %d-byte input", n, len(data))
		}
	})
}

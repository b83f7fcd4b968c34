package gguf

import (
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
		for _, k := range g.keys() {
			g.String(k)
			g.Uint(k)
			g.Float(k)
			g.Bool(k)
			g.Strings(k)
			g.Float32s(k)
			g.Ints(k)
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

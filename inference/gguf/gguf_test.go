package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample writes a small file with one tensor of each type and some metadata.
func sample(t testing.TB, dir string) (string, map[string][]float32) {
	t.Helper()
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 2)
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.SetBool("tokenizer.ggml.add_bos_token", true)
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b", "▁c"})
	w.SetFloat32s("tokenizer.ggml.scores", []float32{0, -1, -2})
	w.SetInt32s("tokenizer.ggml.token_type", []int32{1, 1, 3})
	rng := rand.New(rand.NewPCG(1, 2))
	vals := map[string][]float32{}
	for _, tc := range []struct {
		name  string
		typ   Type
		shape []uint64
	}{
		{"a.f32", TypeF32, []uint64{5, 3}},
		{"b.f16", TypeF16, []uint64{7}},
		{"c.q8", TypeQ8_0, []uint64{64, 2, 2}},
	} {
		n := 1
		for _, d := range tc.shape {
			n *= int(d)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		vals[tc.name] = v
		cols := int(tc.shape[0])
		if err := w.AddTensor(tc.name, tc.typ, tc.shape, func(r int, dst []float32) { copy(dst, v[r*cols:]) }); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path, vals
}

func TestRoundTrip(t *testing.T) {
	path, vals := sample(t, t.TempDir())
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, ok, err := f.String("general.architecture"); err != nil || !ok || s != "llama" {
		t.Fatalf("architecture = %q %v %v", s, ok, err)
	}
	if n, _, err := f.Uint("llama.block_count"); err != nil || n != 2 {
		t.Fatalf("block_count = %d %v", n, err)
	}
	if e, _, err := f.Float("llama.attention.layer_norm_rms_epsilon"); err != nil || math.Abs(e-1e-5) > 1e-10 {
		t.Fatalf("eps = %v %v", e, err)
	}
	if b, _, err := f.Bool("tokenizer.ggml.add_bos_token"); err != nil || !b {
		t.Fatalf("add_bos = %v %v", b, err)
	}
	if ss, _, err := f.Strings("tokenizer.ggml.tokens"); err != nil || strings.Join(ss, ",") != "a,b,▁c" {
		t.Fatalf("tokens = %q %v", ss, err)
	}
	if sc, _, err := f.Float32s("tokenizer.ggml.scores"); err != nil || len(sc) != 3 || sc[2] != -2 {
		t.Fatalf("scores = %v %v", sc, err)
	}
	if ty, _, err := f.Ints("tokenizer.ggml.token_type"); err != nil || len(ty) != 3 || ty[2] != 3 {
		t.Fatalf("types = %v %v", ty, err)
	}
	if _, _, err := f.Uint("general.architecture"); err == nil {
		t.Fatal("reading a string as an integer succeeded")
	}
	if _, ok, _ := f.String("missing"); ok {
		t.Fatal("missing key reported present")
	}
	for name, want := range vals {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s missing", name)
		}
		if ti.Offset%32 != 0 {
			t.Errorf("%s offset %d not aligned", name, ti.Offset)
		}
		raw, err := f.ReadTensor(ti, nil)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := ti.Type.RowBytes(ti.cols())
		got := make([]float32, ti.cols())
		for r := 0; r < ti.rows(); r++ {
			if err := DecodeRow(got, ti.Type, raw[r*rb:(r+1)*rb]); err != nil {
				t.Fatal(err)
			}
			for c, g := range got {
				w := want[r*ti.cols()+c]
				tol := map[Type]float64{TypeF32: 0, TypeF16: 1e-3 * math.Abs(float64(w)), TypeQ8_0: 0.03}[ti.Type]
				if math.Abs(float64(g-w)) > tol {
					t.Fatalf("%s[%d,%d] = %v, want %v (±%v)", name, r, c, g, w, tol)
				}
			}
		}
	}
}

func TestF16RoundTripAllValues(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f != f {
			continue
		}
		if back := F32ToF16(f); back != uint16(h) {
			t.Fatalf("h=%#04x -> %v -> %#04x", h, f, back)
		}
	}
	cases := map[float32]uint16{1: 0x3c00, -2: 0xc000, 65504: 0x7bff, 65520: 0x7c00, 1e-8: 0, 5.960464477539063e-08: 1, 1.00048828125: 0x3c00, 1.00146484375: 0x3c02}
	for f, want := range cases {
		if got := F32ToF16(f); got != want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", f, got, want)
		}
	}
}

func TestQ8BlockMatchesReference(t *testing.T) {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i-16) / 4
	}
	b, err := EncodeRow(nil, TypeQ8_0, x)
	if err != nil || len(b) != Q8BlockBytes {
		t.Fatalf("len %d err %v", len(b), err)
	}
	// amax = 4 -> d = 4/127; x[0] = -4 -> q = -127.
	if F16ToF32(uint16(b[0])|uint16(b[1])<<8) != F16ToF32(F32ToF16(4.0/127)) || int8(b[2]) != -127 {
		t.Fatalf("block header %v", b[:3])
	}
	if _, err := EncodeRow(nil, TypeQ8_0, x[:31]); err == nil {
		t.Fatal("Q8_0 row of 31 accepted")
	}
}

func TestMalformed(t *testing.T) {
	dir := t.TempDir()
	path, _ := sample(t, dir)
	good, _ := os.ReadFile(path)
	write := func(b []byte) string {
		p := filepath.Join(dir, "bad.gguf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string][]byte{
		"empty":       {},
		"magic":       append([]byte("GGUX"), good[4:]...),
		"truncated":   good[:len(good)-40],
		"header only": good[:100],
		"split key":   append(append([]byte{}, good...), []byte("split.tensors.count")...),
	}
	// Tensor offset far past the end: patch the first tensor's offset field.
	ti := bytes.Index(good, []byte("a.f32"))
	off := append([]byte{}, good...)
	// name(5) + ndims(4) + 2 dims(16) + type(4) then offset(8)
	copy(off[ti+5+4+16+4:], []byte{0, 0, 0, 0, 0, 0, 1, 0})
	cases["offset"] = off
	dims := append([]byte{}, good...)
	copy(dims[ti+5+4:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	cases["dims"] = dims
	for name, b := range cases {
		f, err := Open(write(b))
		if err == nil {
			f.Close()
			t.Errorf("%s: opened a malformed file", name)
		} else if !strings.HasPrefix(err.Error(), "gguf: ") {
			t.Errorf("%s: error without prefix: %v", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "model-00001-of-00002.gguf")); err == nil || !strings.Contains(err.Error(), "split") {
		t.Errorf("shard name: %v", err)
	}
}

package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestKQuantsRoundTrip: encoded then decoded rows stay within each type's
// resolution.
func TestKQuantsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float32, 4*KBlockSize)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Ldexp(1, i/KBlockSize-2))
	}
	for _, tc := range []struct {
		t   Type
		rms float64 // bound on RMS error / RMS value
	}{{TypeBF16, 0.005}, {TypeQ6_K, 0.03}, {TypeQ4_K, 0.15}} {
		raw, err := EncodeRow(nil, tc.t, x)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := tc.t.RowBytes(len(x)); n != len(raw) {
			t.Fatalf("%v: %d bytes, RowBytes says %d", tc.t, len(raw), n)
		}
		y := make([]float32, len(x))
		if err := DecodeRow(y, tc.t, raw); err != nil {
			t.Fatal(err)
		}
		var se, sx float64
		for i := range x {
			se += math.Pow(float64(x[i]-y[i]), 2)
			sx += float64(x[i]) * float64(x[i])
		}
		if r := math.Sqrt(se / sx); r > tc.rms {
			t.Fatalf("%v: relative RMS error %.3g > %.3g", tc.t, r, tc.rms)
		}
	}
	if bf16ToF32(f32ToBF16(1.00390625)) != 1 || bf16ToF32(f32ToBF16(1.01171875)) != 1.015625 {
		t.Fatal("BF16 does not round to nearest even")
	}
}

// TestQ4KLayout decodes a hand-built block against ggml's layout written
// out per weight: sub-block s of 32 has scale and min from the 12 packed
// bytes (6 bits each; sub-blocks 4..7 split over a nibble and two high
// bits), and its quants are the low nibbles of qs[32(s/2):] when s is
// even, the high nibbles when odd.
func TestQ4KLayout(t *testing.T) {
	blk := make([]byte, q4KBlockBytes)
	binary.LittleEndian.PutUint16(blk, F32ToF16(0.5))
	binary.LittleEndian.PutUint16(blk[2:], F32ToF16(0.25))
	sc := [8]byte{1, 2, 3, 60, 5, 17, 33, 63}
	mn := [8]byte{0, 9, 4, 3, 48, 7, 2, 21}
	for s := range 4 {
		blk[4+s] = sc[s] | sc[s+4]>>4<<6
		blk[8+s] = mn[s] | mn[s+4]>>4<<6
		blk[12+s] = sc[s+4]&15 | mn[s+4]&15<<4
	}
	for i := range 128 {
		blk[16+i] = byte(i*7) ^ byte(i>>2)
	}
	got := make([]float32, KBlockSize)
	if err := DecodeRow(got, TypeQ4_K, blk); err != nil {
		t.Fatal(err)
	}
	for i := range KBlockSize {
		s, l := i/32, i%32
		q := blk[16+32*(s/2)+l] & 15
		if s%2 == 1 {
			q = blk[16+32*(s/2)+l] >> 4
		}
		want := float32(0.5*float32(sc[s])*float32(q)) - float32(0.25*float32(mn[s]))
		if got[i] != want {
			t.Fatalf("weight %d: %v, want %v", i, got[i], want)
		}
	}
}

// TestQ6KLayout: weight i of a block is in half h = i/128, quarter
// k = (i%128)/32, lane l = i%32; its low 4 bits are a nibble of
// ql[64h + 32(k%2) + l] (high nibble for k >= 2), its high 2 bits bits 2k
// of qh[32h + l], its scale sc[8h + 2k + l/16]; the quant is centred on 32.
func TestQ6KLayout(t *testing.T) {
	blk := make([]byte, q6KBlockBytes)
	for i := range 192 {
		blk[i] = byte(i*13) ^ byte(i>>3)
	}
	for i := range 16 {
		blk[192+i] = byte(int8(i*9 - 70))
	}
	binary.LittleEndian.PutUint16(blk[208:], F32ToF16(0.125))
	got := make([]float32, KBlockSize)
	if err := DecodeRow(got, TypeQ6_K, blk); err != nil {
		t.Fatal(err)
	}
	for i := range KBlockSize {
		h, k, l := i/128, i%128/32, i%32
		lo := blk[64*h+32*(k%2)+l] & 15
		if k >= 2 {
			lo = blk[64*h+32*(k%2)+l] >> 4
		}
		hi := blk[128+32*h+l] >> (2 * k) & 3
		q := int(lo|hi<<4) - 32
		s := int8(blk[192+8*h+2*k+l/16])
		want := float32(0.125*float32(s)) * float32(q)
		if got[i] != want {
			t.Fatalf("weight %d: %v, want %v", i, got[i], want)
		}
	}
}

// FuzzDecodeKQuants: any bytes decode (no panic), the same way twice.
func FuzzDecodeKQuants(f *testing.F) {
	f.Add(make([]byte, q6KBlockBytes))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ty := range []Type{TypeQ4_K, TypeQ6_K, TypeBF16} {
			n, _ := ty.RowBytes(KBlockSize)
			for len(data) >= n && n > 0 {
				a, b := make([]float32, KBlockSize), make([]float32, KBlockSize)
				if DecodeRow(a, ty, data[:n]) != nil || DecodeRow(b, ty, data[:n]) != nil {
					t.Fatalf("%v: a whole block refused", ty)
				}
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) && a[i] == a[i] {
						t.Fatalf("%v: decoding differs", ty)
					}
				}
				data = data[n:]
			}
		}
	})
}

package commit

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
)

func randomSteps(rng *rand.Rand, n, vocab int) [][]inference.LogProb {
	steps := make([][]inference.LogProb, n)
	for s := range steps {
		perm := rng.Perm(vocab)[:TopK]
		lp := float32(-rng.Float64())
		for _, id := range perm {
			steps[s] = append(steps[s], inference.LogProb{ID: id, LogProb: lp})
			lp -= float32(rng.Float64() * 2)
		}
	}
	return steps
}

func TestInterpolation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5, 128} {
		xs := make([]uint32, n)
		ys := make([]uint32, n)
		seen := map[uint32]bool{}
		for i := range xs {
			for {
				xs[i] = rng.Uint32N(Prime)
				if !seen[xs[i]] {
					seen[xs[i]] = true
					break
				}
			}
			ys[i] = rng.Uint32N(Prime)
		}
		coef := interpolate(xs, ys)
		c16 := make([]uint16, len(coef))
		for i, c := range coef {
			c16[i] = uint16(c)
		}
		for i := range xs {
			if got := evaluate(c16, xs[i]); got != ys[i] {
				t.Fatalf("n=%d: P(%d) = %d, want %d", n, xs[i], got, ys[i])
			}
		}
	}
	if invmod(3)*3%Prime != 1 {
		t.Fatal("inverse")
	}
}

func TestBuildAndVerifyExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const vocab = 32000
	steps := randomSteps(rng, 75, vocab)
	proofs, err := Build(steps, vocab)
	if err != nil {
		t.Fatal(err)
	}
	if len(proofs) != 3 || proofs[2].Steps() != 11 {
		t.Fatalf("%d proofs, last covers %d steps", len(proofs), proofs[len(proofs)-1].Steps())
	}
	b, _ := proofs[0].MarshalBinary()
	if len(b) != ChunkBytes || ChunkBytes != 258 {
		t.Fatalf("full chunk proof is %d bytes", len(b))
	}
	rep, err := Verify(proofs, steps, vocab, Tolerance{})
	if err != nil || !rep.OK {
		t.Fatalf("exact recomputation: %+v %v", rep, err)
	}
	for _, c := range rep.Chunks {
		if c.ExpMismatch != 0 || c.MeanMantissa != 0 {
			t.Fatalf("exact recomputation differs: %+v", c)
		}
	}
	// A different token in one step's top-k is caught (its index was not committed).
	bad := append([][]inference.LogProb{}, steps...)
	bad[40] = append([]inference.LogProb{}, steps[40]...)
	bad[40][3].ID = (bad[40][3].ID + 1) % vocab
	rep, _ = Verify(proofs, bad, vocab, Tolerance{})
	if rep.OK || rep.Chunks[1].OK || !rep.Chunks[0].OK || rep.Chunks[1].ExpMismatch+int(rep.Chunks[1].MeanMantissa) == 0 {
		t.Fatalf("swapped token not caught: %+v", rep.Chunks)
	}
	// A small shift in one log-prob moves its mantissa.
	bad[40] = append([]inference.LogProb{}, steps[40]...)
	bad[40][0].LogProb -= 0.05
	rep, _ = Verify(proofs, bad, vocab, Tolerance{})
	if rep.Chunks[1].OK {
		t.Fatal("shifted log-prob not caught with zero tolerance")
	}
	if _, err := Verify(proofs, steps[:74], vocab, DefaultTolerance); err == nil {
		t.Fatal("step count mismatch accepted")
	}
	if _, err := Build([][]inference.LogProb{steps[0][:3]}, vocab); err == nil {
		t.Fatal("short top-k accepted")
	}
}

func TestEncodeDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	proofs, err := Build(randomSteps(rng, 40, 1000), 1000)
	if err != nil {
		t.Fatal(err)
	}
	enc := Encode(proofs)
	if len(enc) != 4+2+258+2+2+8*8 {
		t.Fatalf("encoded %d bytes", len(enc))
	}
	dec, err := Decode(enc)
	if err != nil || !bytes.Equal(Encode(dec), enc) {
		t.Fatalf("round trip: %v", err)
	}
	h := Hash(proofs)
	dec[1].Coeffs[0] ^= 1
	if Hash(dec) == h {
		t.Fatal("hash ignores a coefficient")
	}
	bad := [][]byte{
		nil,
		{0, 0, 0, 1},
		append(append([]byte{}, enc...), 0),
		enc[:len(enc)-1],
		{0, 0, 0, 1, 0, 10, 0xff, 0xf2, 0, 0, 0, 0, 0, 0, 0, 0},       // modulus above Prime
		{0, 0, 0, 1, 0, 10, 0x80, 0x00, 0, 0, 0, 0, 0, 0, 0xff, 0xf1}, // coefficient not in the field
		{0xff, 0xff, 0xff, 0xff},
	}
	for i, b := range bad {
		if _, err := Decode(b); err == nil {
			t.Errorf("malformed set %d accepted", i)
		}
	}
	// A short proof that is not the last one is refused.
	short := Encode([]Proof{proofs[1], proofs[0]})
	if _, err := Decode(short); err == nil {
		t.Error("partial chunk before a full one accepted")
	}
}

func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	proofs, _ := Build(randomSteps(rng, 40, 500), 500)
	f.Add(Encode(proofs))
	f.Add(Encode(proofs[:1]))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := Decode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(Encode(ps), b) {
			t.Fatal("decoded proofs do not re-encode to the input")
		}
		steps := 0
		for _, p := range ps {
			steps += p.Steps()
		}
		rep, err := Verify(ps, randomSteps(rand.New(rand.NewPCG(1, 1)), steps, 500), 500, DefaultTolerance)
		if err != nil || len(rep.Chunks) != len(ps) {
			t.Fatalf("verify of decoded proofs: %v", err)
		}
	})
}

func TestBuilderMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	steps := randomSteps(rng, 70, 900)
	want, _ := Build(steps, 900)
	b := NewBuilder(900)
	emitted := 0
	for _, s := range steps {
		p, err := b.Add(s)
		if err != nil {
			t.Fatal(err)
		}
		if p != nil {
			emitted++
		}
	}
	got, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if emitted != 2 || Hash(got) != Hash(want) {
		t.Fatalf("builder emitted %d chunks, hash match %v", emitted, Hash(got) == Hash(want))
	}
	if _, err := NewBuilder(900).Add(steps[0][:2]); err == nil {
		t.Fatal("short step accepted")
	}
}

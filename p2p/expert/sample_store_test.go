package expert

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestSampleStoreFind: the newest file under an ID is found, an ID never
// stored is not, and a pruned one is gone.
func TestSampleStoreFind(t *testing.T) {
	s, err := OpenSampleStore(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := [32]byte{0xaa}, [32]byte{0xbb}
	first, _ := s.Put(a, []byte("1"))
	second, _ := s.Put(a, []byte("2"))
	if name, ok, err := s.Find(a); err != nil || !ok || name != second || name == first {
		t.Fatalf("find a: %q %v %v, want the newest %q", name, ok, err, second)
	}
	if _, ok, _ := s.Find(b); ok {
		t.Fatal("found an ID never stored")
	}
	if KeyOf(second) != IndexKey(a) || KeyOf(second) == IndexKey(b) {
		t.Fatalf("file %s carries key %q, stored under %q", second, KeyOf(second), IndexKey(a))
	}
	s.Put(b, []byte("3"))
	s.Put(b, []byte("4"))
	if _, ok, _ := s.Find(a); ok {
		t.Fatal("found a pruned ID")
	}
}

func TestSampleStoreBoundAndOrder(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSampleStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := s.Put([32]byte{byte(i)}, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	names, err := s.List()
	if err != nil || len(names) != 3 {
		t.Fatalf("%d files kept (%v), want the bound 3", len(names), err)
	}
	for i, n := range names {
		if b, err := s.Get(n); err != nil || string(b) != fmt.Sprint(i+2) {
			t.Fatalf("file %d holds %q (%v), want the newest three in order", i, b, err)
		}
	}
	// Reopened, numbering continues: a new file is the newest, and the
	// oldest goes.
	s2, err := OpenSampleStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Put([32]byte{9}, []byte("new")); err != nil {
		t.Fatal(err)
	}
	names, _ = s2.List()
	if b, _ := s2.Get(names[len(names)-1]); len(names) != 3 || string(b) != "new" {
		t.Fatalf("after reopening: %v, newest %q", names, b)
	}
	if _, err := s2.Get("../x.cbor"); err == nil {
		t.Fatal("a path outside the store was read")
	}
}

// validSample is a sampled batch the holder h really signed.
func validSample(t testing.TB, h holderIdentity) *SampledBatch {
	req := sampleRequest(t)
	outs := [][]byte{bytes.Clone(req.Batches[0].Rows), bytes.Clone(req.Batches[1].Rows)}
	outs[1][0] ^= 1
	rc, err := Sign(h.sess, NewReceipt(h.sess, req, outs, time.Now()), false)
	if err != nil {
		t.Fatal(err)
	}
	return &SampledBatch{Model: req.Model, Layer: req.Layer, Dim: req.Dim, Expert: 2, Positions: []uint32{3, 4},
		Input: req.Batches[1].Rows, Output: outs[1], Receipt: rc, Index: 1, Holder: []byte(h.peer), Machine: h.machine()}
}

func TestSampledBatchCheck(t *testing.T) {
	h := newHolderIdentity(t)
	b := validSample(t, h)
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	wrongOut := *b
	wrongOut.Output = bytes.Clone(b.Input)
	wrongIndex := *b
	wrongIndex.Index = 0
	wrongHolder := *b
	wrongHolder.Machine[0] ^= 1
	for name, c := range map[string]struct {
		b    *SampledBatch
		want error
	}{"output": {&wrongOut, ErrOutputMismatch}, "index": {&wrongIndex, ErrInputMismatch}, "machine": {&wrongHolder, ErrWrongSigner}} {
		if err := c.b.Check(); !errors.Is(err, c.want) {
			t.Fatalf("%s not its receipt's: %v, want %v", name, err, c.want)
		}
	}
}

func FuzzDecodeSampledBatch(f *testing.F) {
	good, err := EncodeSampledBatch(validSample(f, newHolderIdentity(f)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0xab})
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := DecodeSampledBatch(in)
		if err != nil {
			return
		}
		if b.Check() != nil {
			t.Fatal("accepted a batch failing Check")
		}
		out, err := EncodeSampledBatch(b)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("accepted batch does not re-encode to itself (%v)", err)
		}
	})
}

func FuzzDecodeEvidence(f *testing.F) {
	b := validSample(f, newHolderIdentity(f))
	ev := &Evidence{Batch: *b, RecomputedHash: [32]byte{1}, RecomputedBy: []byte("standby"), TimeMs: 1}
	ev.InputHash, ev.ClaimedHash = sha256.Sum256(b.Input), sha256.Sum256(b.Output)
	good, err := EncodeEvidence(ev)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Fuzz(func(t *testing.T, in []byte) {
		e, err := DecodeEvidence(in)
		if err != nil {
			return
		}
		if e.RecomputedHash == e.ClaimedHash || e.Batch.Check() != nil {
			t.Fatal("accepted evidence that proves nothing")
		}
		out, err := EncodeEvidence(e)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("accepted evidence does not re-encode to itself (%v)", err)
		}
	})
}

func FuzzDecodeBinding(f *testing.F) {
	good, err := EncodeBinding(&Binding{Payer: terms.AccountID{1}, RequestDigest: terms.Hash32{2},
		ReceiptHashes: []terms.Hash32{{3}, {4}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add([]byte{0xa3, 0x01, 0x58, 0x20})
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := DecodeBinding(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if b.Check() != nil {
			t.Fatal("accepted a binding failing Check")
		}
		out, err := EncodeBinding(b)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("accepted binding does not re-encode to itself (%v)", err)
		}
	})
}

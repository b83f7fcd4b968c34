package store

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// TestEvidenceKeptAcrossReopen: evidence put for a request digest comes
// back whole after the store is closed and reopened; another digest is
// not found; evidence a dispute could never carry (no payer, an input
// above the chain's limit, a short digest) is refused with ErrInvalid.
func TestEvidenceKeptAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	digest := bytes.Repeat([]byte{0xd1}, 32)
	want := Evidence{Payer: "buyer-1", Nonce: bytes.Repeat([]byte{7}, 16), Proofs: []byte{0, 0, 0, 1, 9},
		Tokens: []uint32{1, 0xffffffff, 3}, Input: []byte(`{"chat":false,"prompt":"p","sampling":{}}`)}
	if err := s.PutEvidence(digest, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	got, err := s.GetEvidence(digest)
	if err != nil {
		t.Fatal(err)
	}
	if got.Payer != want.Payer || !bytes.Equal(got.Nonce, want.Nonce) || !bytes.Equal(got.Proofs, want.Proofs) ||
		!slices.Equal(got.Tokens, want.Tokens) || !bytes.Equal(got.Input, want.Input) {
		t.Fatalf("evidence after reopen %+v, put %+v", got, want)
	}
	if _, err := s.GetEvidence(bytes.Repeat([]byte{0xd2}, 32)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another digest: %v, want ErrNotFound", err)
	}
	for name, bad := range map[string]func(*Evidence) []byte{
		"no payer":       func(e *Evidence) []byte { e.Payer = ""; return digest },
		"no nonce":       func(e *Evidence) []byte { e.Nonce = nil; return digest },
		"input too long": func(e *Evidence) []byte { e.Input = make([]byte, MaxEvidenceInput+1); return digest },
		"short digest":   func(e *Evidence) []byte { return digest[:31] },
	} {
		e := want
		d := bad(&e)
		if err := s.PutEvidence(d, e); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// FuzzDecodeEvidence: any stored bytes decode to evidence PutEvidence
// would accept, or fail with ErrCorrupt; never a panic, and what decodes
// encodes back to the same bytes.
func FuzzDecodeEvidence(f *testing.F) {
	good, _ := cborx.Marshal(Evidence{Payer: "p", Nonce: []byte{1}, Proofs: []byte{0, 0, 0, 0}, Tokens: []uint32{5}, Input: []byte("{}")})
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Add([]byte{0xa1, 0x04, 0x9a, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEvidence(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if err := e.check(); err != nil {
			t.Fatalf("decoded evidence fails its own check: %v", err)
		}
		again, err := cborx.Marshal(e)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded evidence re-encodes to %x (%v), read from %x", again, err, b)
		}
	})
}

package settle

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

func seedEntry(t testing.TB, st State) []byte {
	receipt := bytes.Repeat([]byte{0xa5}, 300)
	e := &Entry{State: st, At: 1_700_000_000_000_000_000, Acked: true, Height: 42, Expected: 7}
	e.Record.Price, e.Record.Receipt, e.Record.ReceiptHash = 5, receipt, sha256.Sum256(receipt)
	e.Record.Sig = bytes.Repeat([]byte{1}, 64)
	e.Record.ExpiryHeight = 100
	if p, err := peer.Decode("12D3KooWEREcCYUVnJFmoTLG2YFUqQed4waUvE6yHNhW7SPaj8EM"); err == nil {
		e.Peer = []byte(p)
	}
	if st == StateSkipped {
		e.Code, e.Reason = 5, "overdraft"
	}
	b, err := encodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeEntry: DecodeEntry never panics, and whatever it accepts
// re-encodes to exactly the input (one encoding per entry) and decodes
// again to a valid entry.
func FuzzDecodeEntry(f *testing.F) {
	for _, st := range []State{StatePending, StateSettled, StateSkipped} {
		f.Add(seedEntry(f, st))
	}
	f.Add([]byte{0xa0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			return
		}
		re, err := encodeEntry(e)
		if err != nil {
			t.Fatalf("accepted entry does not encode: %v", err)
		}
		if !bytes.Equal(re, b) {
			t.Fatalf("accepted a non-canonical entry:\n in %x\nout %x", b, re)
		}
		if sha256.Sum256(e.Record.Receipt) != e.Record.ReceiptHash || e.State < StatePending || e.State > StateSkipped {
			t.Fatalf("accepted an invalid entry: %+v", e)
		}
	})
}

// TestDecodeEntryRejects: the stored-entry checks each catch their case.
func TestDecodeEntryRejects(t *testing.T) {
	good := seedEntry(t, StatePending)
	if _, err := DecodeEntry(good); err != nil {
		t.Fatalf("valid entry: %v", err)
	}
	mut := func(f func(*Entry)) []byte {
		e, err := DecodeEntry(good)
		if err != nil {
			t.Fatal(err)
		}
		f(e)
		b, err := encodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, b := range map[string][]byte{
		"state 0":           mut(func(e *Entry) { e.State = 0 }),
		"state 9":           mut(func(e *Entry) { e.State = 9 }),
		"receipt hash":      mut(func(e *Entry) { e.Record.ReceiptHash[0] ^= 1 }),
		"price 0":           mut(func(e *Entry) { e.Record.Price = 0 }),
		"bad peer":          mut(func(e *Entry) { e.Peer = []byte{1, 2, 3} }),
		"pending with code": mut(func(e *Entry) { e.Code = 3 }),
		"negative height":   mut(func(e *Entry) { e.Height = -1 }),
		"truncated":         good[:len(good)-1],
	} {
		if _, err := DecodeEntry(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzParseTimeKey: the time-index key parser never panics and accepts
// only keys timeKey produces.
func FuzzParseTimeKey(f *testing.F) {
	var k rkey
	k[0], k[63] = 1, 2
	f.Add(timeKey(1_700_000_000_000_000_000, StateSettled, k).String())
	f.Add(timeKey(0, StateSkipped, k).String())
	f.Add(timePrefix + "zz")
	f.Fuzz(func(t *testing.T, s string) {
		at, st, k, err := parseTimeKey(s)
		if err != nil {
			return
		}
		if got := timeKey(at, st, k).String(); got != s {
			t.Fatalf("parsed %q but it re-forms as %q", s, got)
		}
	})
}

package buyerkeys

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// FuzzDecodeKey: a stored key record decodes to a valid key or fails
// with ErrCorrupt, and a decoded key's encoding decodes and is stable.
func FuzzDecodeKey(f *testing.F) {
	k := &Key{Settings: Settings{Label: "ci", MaxBudget: 5, BudgetDuration: "1d", Models: []string{"tiny"},
		Preferences: []byte(`{"order":["p1"]}`)}, ID: "key_0123456789abcdef", TokenSHA256: hashOf("t"), Payer: "alice", CreatedMs: 1}
	b, err := encodeKey(k)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0xa0})
	k.Models, k.Preferences = []string{}, []byte{}
	if b, err = cborx.Marshal(struct {
		Key
		Empty []string `cbor:"7,keyasint"`
	}{Key: *k}); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := decodeKey(b)
		if err != nil {
			return
		}
		// Empty fields present in b are left out when encoded again; from
		// there the encoding is stable.
		once, err := encodeKey(k)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := decodeKey(once)
		if err != nil {
			t.Fatalf("a decoded key encodes to %x, which does not decode: %v", once, err)
		}
		twice, err := encodeKey(k2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("re-encoded %x, then %x (%v)", once, twice, err)
		}
	})
}

// FuzzDecodeUsage: a stored spend or usage record decodes within its
// bounds or fails, never panics.
func FuzzDecodeUsage(f *testing.F) {
	u := &DayUsage{Day: "2026-12-03"}
	if err := u.add("tiny", "p1", 7); err != nil {
		f.Fatal(err)
	}
	ub, _ := cborx.Marshal(u)
	sb, _ := cborx.Marshal(&spendRecord{PeriodStartMs: 1, Period: 2, Total: 3, Calls: 1})
	f.Add(ub)
	f.Add(sb)
	f.Fuzz(func(t *testing.T, b []byte) {
		if u, err := decodeUsage(b); err == nil && (len(u.Models) > maxTallies || len(u.Providers) > maxTallies) {
			t.Fatalf("usage over its bounds: %+v", u)
		}
		if sp, err := decodeSpend(b); err == nil && sp.Period > sp.Total {
			t.Fatalf("spend %+v", sp)
		}
	})
}

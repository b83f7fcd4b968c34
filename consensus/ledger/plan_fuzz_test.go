package ledger_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FuzzPlanPayouts: any total and any split the legs check admits pays out
// exactly the total, each leg its big-integer floor share and the first
// the remainder; a split the check refuses is never paid.
func FuzzPlanPayouts(f *testing.F) {
	f.Add(uint64(1001), []byte{0x0d, 0x05, 0x0d, 0x05, 0x0d, 0x06})
	f.Add(^uint64(0), []byte{0x27, 0x10})
	f.Add(uint64(1), []byte{0x00, 0x01, 0x27, 0x0f})
	f.Add(uint64(7), []byte{0x13, 0x88, 0x13, 0x89})
	f.Fuzz(func(t *testing.T, total uint64, split []byte) {
		var legs []ledger.PlanLeg
		for i := 0; i+1 < len(split) && len(legs) <= ledger.MaxPlanLegs; i += 2 {
			legs = append(legs, ledger.PlanLeg{Payee: terms.AccountID{byte(i + 1)}, BPS: uint64(binary.BigEndian.Uint16(split[i:]))})
		}
		if ledger.CheckLegs(legs) != nil || total == 0 {
			return
		}
		got, want := ledger.PlanPayouts(total, legs), wantPayouts(total, legs)
		var sum uint64
		for i := range got {
			if got[i] != want[i] || got[i] > total {
				t.Fatalf("total %d legs %+v: payouts %v, want %v", total, legs, got, want)
			}
			sum += got[i]
		}
		if sum != total {
			t.Fatalf("total %d: payouts %v sum to %d", total, got, sum)
		}
	})
}

// FuzzQuoteSplitRule: any input is refused as malformed or reads as a
// canonical quote whose split rule, when named, is the 32 bytes under key
// 9 of its map.
func FuzzQuoteSplitRule(f *testing.F) {
	named, _ := cborx.Marshal(map[uint64]any{1: ledger.QuoteDomain, 9: bytes.Repeat([]byte{7}, 32)})
	unnamed, _ := cborx.Marshal(map[uint64]any{1: ledger.QuoteDomain, 2: []byte("peer")})
	wrong, _ := cborx.Marshal(map[uint64]any{1: "tenzro/v1/other", 9: bytes.Repeat([]byte{7}, 32)})
	short, _ := cborx.Marshal(map[uint64]any{1: ledger.QuoteDomain, 9: []byte{1}})
	for _, s := range [][]byte{named, unnamed, wrong, short, {0xa0}, {0xff}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rule, ok, err := ledger.QuoteSplitRule(raw)
		if err != nil {
			if ledger.CodeOf(err) != ledger.CodeMalformed {
				t.Fatalf("error with code %v: %v", ledger.CodeOf(err), err)
			}
			return
		}
		var m map[uint64]any
		if err := cborx.UnmarshalCanonical(raw, ledger.MaxQuoteBytes, &m); err != nil {
			t.Fatalf("accepted a non-canonical quote %x: %v", raw, err)
		}
		if m[1] != ledger.QuoteDomain {
			t.Fatalf("accepted domain %v", m[1])
		}
		b, has := m[9].([]byte)
		if has != ok || (ok && !bytes.Equal(b, rule[:])) {
			t.Fatalf("rule %x (named %v) from key 9 = %v", rule, ok, m[9])
		}
	})
}

package infer

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func testHolder(t testing.TB, seed byte) peer.ID {
	t.Helper()
	_, pub, err := crypto.GenerateEd25519Key(bytes.NewReader(bytes.Repeat([]byte{seed}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func paidUse(t testing.TB) ExpertUse {
	return ExpertUse{Holder: []byte(testHolder(t, 1)), Machine: bytes.Repeat([]byte{7}, MachineIDSize), Batches: 4,
		ExpertTokens: 40, Price: 3, Paid: 120, Record: bytes.Repeat([]byte{9}, RecordSize)}
}

// TestFinalFrameExperts: a final frame carries each holder's part; the
// client refuses an entry whose paid amount is not expert-tokens × price,
// or lacks its record or reason, or names a holder twice; a frame without
// experts encodes as before the field existed.
func TestFinalFrameExperts(t *testing.T) {
	unpaid := ExpertUse{Holder: []byte(testHolder(t, 2)), Machine: bytes.Repeat([]byte{8}, MachineIDSize), Batches: 2, ExpertTokens: 12, Price: 5, Unpaid: UnpaidOffChain}
	f := &Frame{Final: &FinalFrame{FinishReason: "stop", Receipt: []byte{1}, Experts: []ExpertUse{paidUse(t), unpaid}}}
	b, err := encodeFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFrame(b, DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := ExpertTokensOf(got.Final.Experts); !ok || n != 52 || got.Final.Experts[1].Unpaid != UnpaidOffChain {
		t.Fatalf("decoded experts %+v", got.Final.Experts)
	}
	js, err := json.Marshal(got.Final.Experts[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"holder":"` + testHolder(t, 1).String() + `","machine":"` + strings.Repeat("07", 32) + `","batches":4,"expert_tokens":40,"price":3,"paid":120,"record":"` + strings.Repeat("09", 32) + `"}`
	if string(js) != want {
		t.Fatalf("json %s\nwant %s", js, want)
	}

	dense, _ := cborx.Marshal(&Frame{Final: &FinalFrame{FinishReason: "stop", Receipt: []byte{1}}})
	if !bytes.Equal(dense, []byte{0xa1, 0x02, 0xa2, 0x01, 0x64, 's', 't', 'o', 'p', 0x05, 0x41, 0x01}) {
		t.Fatalf("a dense final frame changed encoding: %x", dense)
	}

	for name, mutate := range map[string]func(e *ExpertUse){
		"paid not tokens × price": func(e *ExpertUse) { e.Paid++ },
		"paid without record":     func(e *ExpertUse) { e.Record = nil },
		"paid with reason":        func(e *ExpertUse) { e.Unpaid = UnpaidFree },
		"unpaid without reason":   func(e *ExpertUse) { e.Paid, e.Record = 0, nil },
		"unpaid with record":      func(e *ExpertUse) { e.Paid, e.Unpaid = 0, UnpaidFree },
		"bad holder":              func(e *ExpertUse) { e.Holder = []byte{1, 2} },
		"short machine":           func(e *ExpertUse) { e.Machine = e.Machine[:8] },
		"overflowing price":       func(e *ExpertUse) { e.Price, e.Paid = math.MaxUint64, math.MaxUint64 },
		"long reason":             func(e *ExpertUse) { e.Paid, e.Record, e.Unpaid = 0, nil, strings.Repeat("x", 65) },
	} {
		e := paidUse(t)
		mutate(&e)
		b, _ := cborx.Marshal(&Frame{Final: &FinalFrame{Experts: []ExpertUse{e}}})
		if _, err := decodeFrame(b, DefaultMaxFrameSize); !errors.Is(err, ErrMalformedFrame) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	twice, _ := cborx.Marshal(&Frame{Final: &FinalFrame{Experts: []ExpertUse{paidUse(t), paidUse(t)}}})
	if _, err := decodeFrame(twice, DefaultMaxFrameSize); !errors.Is(err, ErrMalformedFrame) {
		t.Errorf("a holder named twice accepted: %v", err)
	}
	big := ExpertUse{Holder: []byte(testHolder(t, 3)), Machine: bytes.Repeat([]byte{8}, MachineIDSize), ExpertTokens: math.MaxUint64, Unpaid: UnpaidFree}
	over, _ := cborx.Marshal(&Frame{Final: &FinalFrame{Experts: []ExpertUse{paidUse(t), big}}})
	if _, err := decodeFrame(over, DefaultMaxFrameSize); !errors.Is(err, ErrMalformedFrame) {
		t.Errorf("overflowing expert-tokens accepted: %v", err)
	}
}

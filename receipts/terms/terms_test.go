package terms

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func TestParseVerification(t *testing.T) {
	for in, want := range map[string]Verification{"": VerifyNone, "none": VerifyNone, " Receipt ": VerifyReceipt,
		"OPTIMISTIC": VerifyOptimistic, "tee": VerifyTEE} {
		got, err := ParseVerification(in)
		if err != nil || got != want {
			t.Fatalf("ParseVerification(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseVerification("zk"); err == nil || !strings.Contains(err.Error(), "none, receipt, optimistic, tee") {
		t.Fatalf("unknown level: %v", err)
	}
	if !VerifyOptimistic.NeedsCommitments() || VerifyReceipt.NeedsCommitments() {
		t.Fatal("only optimistic needs commitments")
	}
}

func TestLogProbsJSONIsOpenAIs(t *testing.T) {
	lp := TokenLogProbs{Token: "\uFFFD", LogProb: -0.5, Bytes: []byte{0xe2},
		Top: []TopLogProb{{Token: "a", LogProb: -0.5}, {Token: "\uFFFD", LogProb: -2, Bytes: []byte{0xe2, 0x82}}}}
	b, err := json.Marshal(lp)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"token":"` + "\uFFFD" + `","logprob":-0.5,"bytes":[226],"top_logprobs":[{"token":"a","logprob":-0.5,"bytes":[97]},{"token":"` + "\uFFFD" + `","logprob":-2,"bytes":[226,130]}]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back TokenLogProbs
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// Bytes equal to the token's text are not kept: one representation.
	if back.Top[0].Bytes != nil || string(back.Bytes) != "\xe2" || string(back.Top[1].Bytes) != "\xe2\x82" {
		t.Fatalf("round trip: %+v", back)
	}
	empty, _ := json.Marshal(TokenLogProbs{Token: "x"})
	if !strings.Contains(string(empty), `"top_logprobs":[]`) {
		t.Fatalf("no alternatives must render as [], got %s", empty)
	}
	if err := json.Unmarshal([]byte(`{"token":"a","logprob":-1,"bytes":[256]}`), &back); err == nil {
		t.Fatal("a byte above 255 was accepted")
	}
}

func FuzzLogProbsJSON(f *testing.F) {
	f.Add([]byte(`{"token":"hi","logprob":-0.5,"bytes":[104,105],"top_logprobs":[{"token":"hi","logprob":-0.5}]}`))
	f.Add([]byte(`{"token":"a","bytes":[-1]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var lp TokenLogProbs
		if err := json.Unmarshal(in, &lp); err != nil {
			return
		}
		if lp.Bytes != nil && string(lp.Bytes) == lp.Token {
			t.Fatalf("kept bytes equal to the token: %q", lp.Token)
		}
		out, err := json.Marshal(lp)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		var again TokenLogProbs
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if string(again.RawBytes()) != string(lp.RawBytes()) || again.LogProb != lp.LogProb || len(again.Top) != len(lp.Top) {
			t.Fatalf("round trip changed %+v into %+v", lp, again)
		}
	})
}

// TestExpertTokensLeaveOldEncodingsAlone: the expert-token fields are
// omitted when zero, so every Units, Breakdown and RateCard signed before
// they existed (receipts, payment records, announcements, quote digests)
// encodes to the same bytes.
func TestExpertTokensLeaveOldEncodingsAlone(t *testing.T) {
	type oldUnits struct {
		InputTokens  uint64 `cbor:"1,keyasint"`
		OutputTokens uint64 `cbor:"2,keyasint"`
		CachedTokens uint64 `cbor:"3,keyasint"`
		PixelSteps   uint64 `cbor:"4,keyasint"`
		AudioMs      uint64 `cbor:"5,keyasint"`
	}
	type oldCard struct {
		InputTokens  uint64 `cbor:"1,keyasint"`
		OutputTokens uint64 `cbor:"2,keyasint"`
		CachedTokens uint64 `cbor:"3,keyasint"`
		PixelSteps   uint64 `cbor:"4,keyasint"`
		AudioMs      uint64 `cbor:"5,keyasint"`
		Minimum      uint64 `cbor:"6,keyasint"`
	}
	same := func(name string, now, before any) {
		t.Helper()
		a, err := cborx.Marshal(now)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cborx.Marshal(before)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: %x, before the field %x", name, a, b)
		}
	}
	same("units", Units{InputTokens: 7, OutputTokens: 3, AudioMs: 1}, oldUnits{InputTokens: 7, OutputTokens: 3, AudioMs: 1})
	same("rate card", RateCard{InputTokens: 1, OutputTokens: 2, Minimum: 10}, oldCard{InputTokens: 1, OutputTokens: 2, Minimum: 10})
	b, _ := cborx.Marshal(Breakdown{Usage: 5, Total: 5})
	if bytes.Contains(b, []byte{0x0b}) {
		t.Fatalf("zero expert_tokens breakdown carries key 11: %x", b)
	}
	js, _ := json.Marshal(Units{InputTokens: 1})
	if strings.Contains(string(js), "expert_tokens") {
		t.Fatalf("dense units show expert_tokens: %s", js)
	}
	// Set, the field travels under its own key and decodes back.
	u := Units{OutputTokens: 2, ExpertTokens: 96}
	enc, err := cborx.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	var back Units
	if err := cborx.UnmarshalCanonical(enc, len(enc), &back); err != nil || back != u {
		t.Fatalf("round trip %+v: %+v %v", u, back, err)
	}
	var old oldUnits
	if err := cborx.Unmarshal(enc, len(enc), &old); err == nil {
		t.Fatal("a decoder without the field accepted expert_tokens silently")
	}
}

// FuzzUnitsCBOR: whatever decodes canonically as Units, RateCard or
// Breakdown re-encodes to the same bytes (one encoding per value, as
// signatures over them need).
func FuzzUnitsCBOR(f *testing.F) {
	for _, v := range []any{Units{InputTokens: 1, ExpertTokens: 9}, RateCard{Minimum: 3, ExpertTokens: 2}, Breakdown{Usage: 4, ExpertTokens: 4, Total: 4}} {
		b, err := cborx.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var u Units
		var c RateCard
		var b Breakdown
		for _, v := range []any{&u, &c, &b} {
			if err := cborx.UnmarshalCanonical(in, 1<<10, v); err != nil {
				continue
			}
			out, err := cborx.Marshal(v)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("%T %+v re-encodes to %x, was %x (%v)", v, v, out, in, err)
			}
		}
	})
}

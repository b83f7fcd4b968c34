package terms

import (
	"encoding/json"
	"strings"
	"testing"
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

package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// goldenInput is the commitment of the test request. It changes only if
// the commitment's encoding changes, which breaks every deployed gateway
// and provider pair: bump the receipt payload type if it ever must.
const goldenInput = "9d493defe296f445684934b5a9d5517d895a4b04ba9fd131e4a8b0ecfe9f7ee1"

// input is one request's committed fields.
type input struct {
	model        []byte
	chat         bool
	msgs         []terms.Message
	prompt, cont string
	s            terms.Sampling
}

func (in input) commit() [32]byte {
	return InputCommitment(in.model, in.chat, in.msgs, in.prompt, in.cont, in.s)
}

func testInput() input {
	s := testSampling
	s.Stop = append([]string{}, testSampling.Stop...)
	return input{model: append([]byte{}, testModel...), chat: true,
		msgs: append([]terms.Message{}, testMessages...), s: s}
}

func TestInputCommitmentStableAndSensitive(t *testing.T) {
	want := testInput().commit()
	if got := hex.EncodeToString(want[:]); got != goldenInput {
		t.Fatalf("commitment of the test request changed: %s", got)
	}
	variants := map[string]func(*input){
		"model":            func(in *input) { in.model[0] ^= 1 },
		"chat flag":        func(in *input) { in.chat = false },
		"role":             func(in *input) { in.msgs[1].Role = "assistant" },
		"content":          func(in *input) { in.msgs[1].Content = "hi!" },
		"message boundary": func(in *input) { in.msgs[0].Content, in.msgs[1].Content = "be brie", "fhi" },
		"message order":    func(in *input) { in.msgs[0], in.msgs[1] = in.msgs[1], in.msgs[0] },
		"extra message":    func(in *input) { in.msgs = append(in.msgs, terms.Message{Role: "user"}) },
		"prompt":           func(in *input) { in.prompt = "x" },
		"continuation":     func(in *input) { in.cont = "Hel" },
		// The same text as a prompt instead of a continuation.
		"prompt vs continuation": func(in *input) { in.prompt = "Hel" },
		"temperature":            func(in *input) { in.s.Temperature = 0.7000001 },
		"top_p":                  func(in *input) { in.s.TopP = 0.95 },
		"top_k":                  func(in *input) { in.s.TopK = 41 },
		"seed":                   func(in *input) { in.s.Seed = 8 },
		"max_tokens":             func(in *input) { in.s.MaxTokens = 65 },
		"stop":                   func(in *input) { in.s.Stop[0] = "\n" },
		"no stop":                func(in *input) { in.s.Stop = nil },
	}
	distinctCommits(t, testInput, variants)

	// Equivalent inputs commit identically.
	in := testInput()
	in.s.Stop = nil
	withNil := in.commit()
	in.s.Stop = []string{}
	if in.commit() != withNil {
		t.Error("nil and empty stop lists commit differently")
	}
	in.s.Temperature = 0
	zero := in.commit()
	in.s.Temperature = math.Copysign(0, -1)
	if in.commit() != zero {
		t.Error("-0 and 0 temperatures commit differently")
	}
	in.s.Temperature = math.NaN()
	nan := in.commit()
	in.s.Temperature = math.Float64frombits(0x7ff8000000000001)
	if in.commit() != nan {
		t.Error("two NaNs commit differently")
	}
	// Invalid UTF-8 commits without error, distinctly.
	a, b := testInput(), testInput()
	a.prompt, b.prompt = "\xff", "\xfe"
	if a.commit() == b.commit() {
		t.Error("distinct invalid UTF-8 prompts commit the same")
	}
}

func TestOutputHashAndRequestDigest(t *testing.T) {
	if OutputHash("abc") != sha256.Sum256([]byte("abc")) {
		t.Error("OutputHash is not the plain SHA-256 of the text")
	}
	if OutputHash("abc") == OutputHash("abc ") {
		t.Error("OutputHash ignores a trailing space")
	}
	in := InputCommitment(testModel, true, testMessages, "", "", testSampling)
	d := RequestDigest(testNonce, in, testModel)
	if d != RequestDigest(append([]byte{}, testNonce...), in, append([]byte{}, testModel...)) {
		t.Error("RequestDigest is not deterministic")
	}
	in2 := in
	in2[0] ^= 1
	otherNonce := append([]byte{1}, testNonce[1:]...)
	for name, got := range map[string][32]byte{
		"nonce": RequestDigest(otherNonce, in, testModel),
		"input": RequestDigest(testNonce, in2, testModel),
		"model": RequestDigest(testNonce, in, testModel[:31]),
	} {
		if got == d {
			t.Errorf("RequestDigest ignores the %s", name)
		}
	}
}

func TestNewSamplingParams(t *testing.T) {
	got, err := NewSamplingParams(terms.Sampling{Temperature: 0.7, TopP: 0.9995, TopK: 40, Seed: 1 << 40, MaxTokens: 128})
	if err != nil {
		t.Fatal(err)
	}
	want := SamplingParams{TemperatureMilli: 700, TopPMilli: 1000, TopK: 40, Seed: 1 << 40, MaxTokens: 128}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for name, s := range map[string]terms.Sampling{
		"NaN temperature":      {Temperature: math.NaN()},
		"negative temperature": {Temperature: -0.1},
		"infinite top_p":       {TopP: math.Inf(1)},
		"huge temperature":     {Temperature: 1e7},
		"negative top_k":       {TopK: -1},
		"negative max_tokens":  {MaxTokens: -1},
		"max_tokens > 2^32-1":  {MaxTokens: math.MaxUint32 + 1},
	} {
		if p, err := NewSamplingParams(s); err == nil {
			t.Errorf("%s accepted as %+v", name, p)
		}
	}
}

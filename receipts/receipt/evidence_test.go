package receipt

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestTokensHashBindsEveryID: every alteration of a token sequence (one
// more or fewer, another ID, another order, IDs that would spell the same
// bytes) hashes differently; the empty sequence and the domain are fixed.
func TestTokensHashBindsEveryID(t *testing.T) {
	base := []uint32{17, 0xe4, 0xb8, 0, 300000}
	h := TokensHash(base)
	for name, ids := range map[string][]uint32{
		"appended":  append(append([]uint32{}, base...), 2),
		"prepended": append([]uint32{2}, base...),
		"dropped":   base[:len(base)-1],
		"replaced":  {17, 0xe4, 0xb9, 0, 300000},
		"reordered": {0xe4, 17, 0xb8, 0, 300000},
		"merged":    {17, 0xe4<<8 | 0xb8, 0, 300000},
		"empty":     nil,
	} {
		if TokensHash(ids) == h {
			t.Errorf("%s: same hash as the signed tokens", name)
		}
	}
	if TokensHash(nil) == TokensHash([]uint32{0}) {
		t.Fatal("no tokens and token 0 hash alike")
	}
	if _, ok := TokenIDs([]int{1, -1}); ok {
		t.Fatal("a negative token ID converted")
	}
	if u, ok := TokenIDs([]int{3, 0xfffd}); !ok || u[1] != 0xfffd {
		t.Fatalf("TokenIDs = %v %v", u, ok)
	}
}

// TestReceiptWithoutTokensHashEncodesAsBefore: the field is omitted when
// empty, so a receipt that does not bind tokens (any level but
// optimistic, or one signed before the field) keeps its exact bytes.
func TestReceiptWithoutTokensHashEncodesAsBefore(t *testing.T) {
	r := Receipt{ModelID: bytes.Repeat([]byte{1}, 32)}
	a, err := cborx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	r.TokensHash = bytes.Repeat([]byte{2}, 32)
	b, err := cborx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) || !bytes.Contains(b, []byte{0x0e, 0x58, 0x20}) || bytes.Contains(a, []byte{0x0e, 0x58, 0x20}) {
		t.Fatalf("key 14 present only when set: without %x, with %x", a, b)
	}
}

// TestEvidenceInputStrict: input evidence round-trips to the receipt's
// input commitment, byte for byte for any text a request can carry (valid
// UTF-8: requests travel as JSON and CBOR text), control bytes and
// characters outside the BMP included, and anything but one object of
// known fields is refused.
func TestEvidenceInputStrict(t *testing.T) {
	in := EvidenceInput{Prompt: "café 你好 \u2028\x00\x1b[0m 🙂 <\"&>", Sampling: terms.Sampling{Temperature: 0.7, Seed: 3, MaxTokens: 9, Stop: []string{"\n"}}}
	b, err := EncodeEvidenceInput(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeEvidenceInput(b)
	if err != nil {
		t.Fatal(err)
	}
	model := bytes.Repeat([]byte{9}, 32)
	want := InputCommitment(model, false, nil, in.Prompt, "", in.Sampling)
	if got.Commitment(model) != in.Commitment(model) {
		t.Fatalf("decoded input commits to %x, encoded %x", got.Commitment(model), in.Commitment(model))
	}
	if in.Commitment(model) != want {
		t.Fatal("EvidenceInput.Commitment is not InputCommitment")
	}
	for name, raw := range map[string]string{
		"unknown field":  `{"chat":false,"prompt":"x","sampling":{},"extra":1}`,
		"trailing data":  `{"chat":false,"prompt":"x","sampling":{}} {}`,
		"two objects":    `{"prompt":"x"}{"prompt":"y"}`,
		"not an object":  `[1]`,
		"empty":          ``,
		"wrong type":     `{"chat":"yes"}`,
		"unknown nested": `{"sampling":{"temp":1}}`,
	} {
		if _, err := DecodeEvidenceInput([]byte(raw)); !errors.Is(err, ErrEvidenceInput) {
			t.Errorf("%s: %v, want ErrEvidenceInput", name, err)
		}
	}
}

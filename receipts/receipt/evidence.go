package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TokensDomain prefixes the token IDs a receipt's TokensHash covers.
const TokensDomain = "tenzro/v1/receipt-tokens\x00" //nolint:gosec // G101: a domain separator, not a credential

// TokensHash is SHA-256 over TokensDomain and the generated token IDs,
// each a big-endian uint32, in the order they were generated. It binds
// the IDs themselves rather than their text: a tokenizer's pieces need not
// be valid UTF-8 one by one (byte-fallback tokens, a character split
// across tokens), the text a provider sends is sanitised piece by piece,
// and a stop string may cut a token, so no rendering of the text pins
// down the tokens a committee must re-execute.
func TokensHash(ids []uint32) [32]byte {
	h := sha256.New()
	h.Write([]byte(TokensDomain))
	var b [4]byte
	for _, id := range ids {
		binary.BigEndian.PutUint32(b[:], id)
		h.Write(b[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// TokenIDs converts an engine's token IDs for TokensHash; ok is false if
// one is negative or beyond uint32 (no vocabulary is that large).
func TokenIDs(ids []int) (out []uint32, ok bool) {
	out = make([]uint32, len(ids))
	for i, id := range ids {
		if id < 0 || uint64(id) > 0xffffffff {
			return nil, false
		}
		out[i] = uint32(id)
	}
	return out, true
}

// EvidenceInput is the format of a dispute's input evidence: the exact
// request a receipt's InputCommitment commits to, as JSON. It lives here,
// beside InputCommitment, because both the chain (which refuses evidence
// whose input is not the signed one) and a committee member (which
// re-executes it) decode it, and they must read the same bytes alike.
type EvidenceInput struct {
	Chat         bool            `json:"chat"`
	Messages     []terms.Message `json:"messages,omitempty"`
	Prompt       string          `json:"prompt,omitempty"`
	Continuation string          `json:"continuation,omitempty"`
	Sampling     terms.Sampling  `json:"sampling"`
}

// ErrEvidenceInput marks input evidence that does not decode.
var ErrEvidenceInput = errors.New("receipt: evidence input")

// EncodeEvidenceInput is what a disputer puts in a dispute's input.
func EncodeEvidenceInput(in EvidenceInput) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("receipt: encode evidence input: %w", err)
	}
	return b, nil
}

// DecodeEvidenceInput parses input evidence strictly: one JSON object of
// known fields and nothing after it, so no two readers can disagree about
// what a disputer sent.
func DecodeEvidenceInput(b []byte) (EvidenceInput, error) {
	var in EvidenceInput
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return EvidenceInput{}, fmt.Errorf("%w: %w", ErrEvidenceInput, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return EvidenceInput{}, fmt.Errorf("%w: trailing data after the input", ErrEvidenceInput)
	}
	return in, nil
}

// Commitment is the input commitment of in for model modelID.
func (in EvidenceInput) Commitment(modelID []byte) [32]byte {
	return InputCommitment(modelID, in.Chat, in.Messages, in.Prompt, in.Continuation, in.Sampling)
}

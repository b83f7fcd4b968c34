package receipt

import (
	"crypto/sha256"
	"fmt"
	"math"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const (
	// InputDomain prefixes the bytes an input commitment covers.
	InputDomain = "tenzro/v1/receipt-input"
	// RequestDomain prefixes the bytes a request digest covers.
	RequestDomain = "tenzro/v1/request"
)

// messageWire is a message as its commitment covers it. The fields after
// Content are omitted when empty, so a plain message commits exactly as
// before they existed; a message given as parts commits to each part (its
// type, order and fields), never to their joined text, because an
// upstream engine sees the parts as they are.
type messageWire struct {
	Role       []byte         `cbor:"1,keyasint"`
	Content    []byte         `cbor:"2,keyasint"`
	Parts      []partWire     `cbor:"3,keyasint,omitempty"`
	Name       []byte         `cbor:"4,keyasint,omitempty"`
	ToolCallID []byte         `cbor:"5,keyasint,omitempty"`
	ToolCalls  []toolCallWire `cbor:"6,keyasint,omitempty"`
}

type partWire struct {
	Type   []byte `cbor:"1,keyasint"`
	Text   []byte `cbor:"2,keyasint,omitempty"`
	URL    []byte `cbor:"3,keyasint,omitempty"`
	Detail []byte `cbor:"4,keyasint,omitempty"`
	Data   []byte `cbor:"5,keyasint,omitempty"`
	Format []byte `cbor:"6,keyasint,omitempty"`
}

type toolCallWire struct {
	ID        []byte `cbor:"1,keyasint"`
	Name      []byte `cbor:"2,keyasint"`
	Arguments []byte `cbor:"3,keyasint"`
}

func messageWireOf(m terms.Message) messageWire {
	w := messageWire{Role: []byte(m.Role), Content: []byte(m.Content), Name: bytesOrNil(m.Name), ToolCallID: bytesOrNil(m.ToolCallID)}
	for _, p := range m.Parts {
		w.Parts = append(w.Parts, partWire{Type: []byte(p.Type), Text: bytesOrNil(p.Text), URL: bytesOrNil(p.URL),
			Detail: bytesOrNil(p.Detail), Data: bytesOrNil(p.Data), Format: bytesOrNil(p.Format)})
	}
	for _, c := range m.ToolCalls {
		w.ToolCalls = append(w.ToolCalls, toolCallWire{ID: []byte(c.ID), Name: []byte(c.Name), Arguments: []byte(c.Arguments)})
	}
	return w
}

// bytesOrNil keeps "" out of an omitempty field's encoding.
func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// inputWire is what InputCommitment hashes. Text travels as byte strings
// and floats as their IEEE-754 bits, so encoding cannot fail and every
// input has exactly one encoding.
type inputWire struct {
	ModelID      []byte        `cbor:"1,keyasint"`
	Chat         bool          `cbor:"2,keyasint"`
	Messages     []messageWire `cbor:"3,keyasint"`
	Prompt       []byte        `cbor:"4,keyasint"`
	Continuation []byte        `cbor:"5,keyasint"`
	Temperature  uint64        `cbor:"6,keyasint"`
	TopP         uint64        `cbor:"7,keyasint"`
	TopK         int64         `cbor:"8,keyasint"`
	Seed         uint64        `cbor:"9,keyasint"`
	MaxTokens    int64         `cbor:"10,keyasint"`
	Stop         [][]byte      `cbor:"11,keyasint"`
	// Format and Tools are omitted for a plain request (commit_format.go).
	Format *formatWire `cbor:"12,keyasint,omitempty"`
	Tools  *toolsWire  `cbor:"13,keyasint,omitempty"`
}

// InputCommitment commits to the exact input of a request: the model, the
// chat flag, the messages (chat) or prompt (completion), the continuation
// text (empty unless the request resumes an interrupted answer) and every
// sampling parameter, stop sequences, response format and tools included. The gateway computes it over
// what it sends and the provider over what it receives; they must agree.
// nil and empty slices commit identically.
func InputCommitment(modelID []byte, chat bool, messages []terms.Message, prompt string, continuation string, s terms.Sampling) [32]byte {
	w := inputWire{
		ModelID: modelID, Chat: chat, Prompt: []byte(prompt), Continuation: []byte(continuation),
		Temperature: floatBits(s.Temperature), TopP: floatBits(s.TopP),
		TopK: int64(s.TopK), Seed: s.Seed, MaxTokens: int64(s.MaxTokens),
	}
	w.Messages = make([]messageWire, len(messages))
	for i, m := range messages {
		w.Messages[i] = messageWireOf(m)
	}
	w.Format, w.Tools = constraintWires(s)
	w.Stop = make([][]byte, len(s.Stop))
	for i, st := range s.Stop {
		w.Stop[i] = []byte(st)
	}
	return digest(InputDomain, w)
}

// floatBits returns v's IEEE-754 bits with -0 folded into 0 and every NaN
// into the canonical quiet NaN.
func floatBits(v float64) uint64 {
	switch {
	case v == 0:
		return 0
	case math.IsNaN(v):
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(v)
}

// OutputHash is SHA-256 over the exact bytes of the output text returned.
func OutputHash(text string) [32]byte { return sha256.Sum256([]byte(text)) }

// RequestDigest identifies one request: SHA-256 over RequestDomain and the
// deterministic CBOR of (nonce, input commitment, model ID).
func RequestDigest(nonce []byte, inputCommitment [32]byte, modelID []byte) [32]byte {
	return digest(RequestDomain, struct {
		Nonce   []byte `cbor:"1,keyasint"`
		Input   []byte `cbor:"2,keyasint"`
		ModelID []byte `cbor:"3,keyasint"`
	}{nonce, inputCommitment[:], modelID})
}

// ReceiptHash is SHA-256 over a receipt envelope's bytes as received.
func ReceiptHash(envelope []byte) [32]byte { return sha256.Sum256(envelope) }

// digest returns SHA-256(domain || CBOR(v)). Callers pass values made only
// of byte strings, integers, booleans and structs and slices of them,
// whose encoding cannot fail; a failure is a programming error.
func digest(domain string, v any) [32]byte {
	b, err := cborx.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("receipt: encoding %s digest input: %v", domain, err))
	}
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(b)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

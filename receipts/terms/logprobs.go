package terms

import (
	"encoding/json"
	"fmt"
)

// TokenLogProbs is one output token's log-probability and its most likely
// alternatives, by token text: what a buyer is shown, what the infer
// protocol carries and what an upstream engine gives.
type TokenLogProbs struct {
	Token   string       `cbor:"1,keyasint"`
	LogProb float32      `cbor:"2,keyasint"`
	Top     []TopLogProb `cbor:"3,keyasint,omitempty"`
	// Bytes are the token's raw bytes when Token cannot carry them (a
	// byte-level piece of a character, shown as U+FFFD); nil when they
	// are Token's own bytes.
	Bytes []byte `cbor:"4,keyasint,omitempty"`
}

// TopLogProb is one alternative.
type TopLogProb struct {
	Token   string  `cbor:"1,keyasint"`
	LogProb float32 `cbor:"2,keyasint"`
	Bytes   []byte  `cbor:"3,keyasint,omitempty"` // as TokenLogProbs.Bytes
}

// RawBytes returns the token's bytes: Bytes when set, else Token's.
func (t TokenLogProbs) RawBytes() []byte { return rawBytes(t.Token, t.Bytes) }

// RawBytes returns the alternative's bytes: Bytes when set, else Token's.
func (t TopLogProb) RawBytes() []byte { return rawBytes(t.Token, t.Bytes) }

func rawBytes(tok string, b []byte) []byte {
	if b != nil {
		return b
	}
	return []byte(tok)
}

// The JSON form is OpenAI's: bytes as an array of integers, always given.
type jsonTop struct {
	Token   string  `json:"token"`
	LogProb float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type jsonToken struct {
	jsonTop
	Top []jsonTop `json:"top_logprobs"`
}

// MarshalJSON renders OpenAI's log-prob object.
func (t TokenLogProbs) MarshalJSON() ([]byte, error) {
	j := jsonToken{jsonTop: jsonTop{Token: t.Token, LogProb: t.LogProb, Bytes: ints(t.RawBytes())}, Top: make([]jsonTop, len(t.Top))}
	for i, a := range t.Top {
		j.Top[i] = jsonTop{Token: a.Token, LogProb: a.LogProb, Bytes: ints(a.RawBytes())}
	}
	return json.Marshal(j)
}

// MarshalJSON renders OpenAI's alternative object.
func (t TopLogProb) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonTop{Token: t.Token, LogProb: t.LogProb, Bytes: ints(t.RawBytes())})
}

// UnmarshalJSON reads OpenAI's log-prob object; bytes outside 0..255 are
// an error, and bytes equal to the token's own are not kept.
func (t *TokenLogProbs) UnmarshalJSON(b []byte) error {
	var j struct {
		jsonTop
		Top []TopLogProb `json:"top_logprobs"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	tok, err := j.alternative()
	if err != nil {
		return err
	}
	*t = TokenLogProbs{Token: tok.Token, LogProb: tok.LogProb, Top: j.Top, Bytes: tok.Bytes}
	return nil
}

// UnmarshalJSON reads OpenAI's alternative object.
func (t *TopLogProb) UnmarshalJSON(b []byte) error {
	var j jsonTop
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	a, err := j.alternative()
	if err != nil {
		return err
	}
	*t = a
	return nil
}

// alternative is what j says, its bytes checked as UnmarshalJSON says:
// a token's own fields are an alternative's, and are read alike.
func (j jsonTop) alternative() (TopLogProb, error) {
	raw, err := fromInts(j.Token, j.Bytes)
	return TopLogProb{Token: j.Token, LogProb: j.LogProb, Bytes: raw}, err
}

func ints(b []byte) []int {
	out := make([]int, len(b))
	for i, x := range b {
		out[i] = int(x)
	}
	return out
}

func fromInts(tok string, in []int) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]byte, len(in))
	for i, x := range in {
		if x < 0 || x > 255 {
			return nil, fmt.Errorf("terms: log-prob byte %d outside 0..255", x)
		}
		out[i] = byte(x)
	}
	if string(out) == tok {
		return nil, nil
	}
	return out, nil
}

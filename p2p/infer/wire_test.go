package infer

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func TestValidate(t *testing.T) {
	if err := validRequest().Validate(); err != nil {
		t.Fatal(err)
	}
	completion := validRequest()
	completion.Chat, completion.Messages, completion.Prompt = false, nil, "Once upon"
	completion.QuoteDigest = nil
	if err := completion.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mut  func(r *Request)
		want string
	}{
		"nonce":          {func(r *Request) { r.Nonce = nil }, "nonce is 0 bytes"},
		"model ID":       {func(r *Request) { r.ModelID = r.ModelID[:31] }, "model ID is 31 bytes"},
		"quote digest":   {func(r *Request) { r.QuoteDigest = []byte{1} }, "quote digest"},
		"verification":   {func(r *Request) { r.Verification = "" }, "verification level"},
		"chat no msgs":   {func(r *Request) { r.Messages = nil }, "without messages"},
		"chat prompt":    {func(r *Request) { r.Prompt = "x" }, "with a prompt"},
		"text with msgs": {func(r *Request) { r.Chat = false }, "set Chat"},
		"role":           {func(r *Request) { r.Messages[0].Role = "root" }, "role \"root\""},
		"too many": {func(r *Request) {
			r.Messages = make([]inference.Message, MaxMessages+1)
		}, "messages, limit"},
		"text": {func(r *Request) {
			r.Messages[0].Content = strings.Repeat("a", MaxTextBytes/2)
			r.Continuation = strings.Repeat("b", MaxTextBytes/2+1)
		}, "bytes of text"},
		"utf8":         {func(r *Request) { r.Messages[1].Content = "\xc3" }, "UTF-8"},
		"temperature":  {func(r *Request) { r.Sampling.Temperature = math.NaN() }, "temperature"},
		"hot":          {func(r *Request) { r.Sampling.Temperature = 2.5 }, "temperature"},
		"top_p":        {func(r *Request) { r.Sampling.TopP = 1.5 }, "top_p"},
		"top_k":        {func(r *Request) { r.Sampling.TopK = -1 }, "top_k"},
		"max_tokens":   {func(r *Request) { r.Sampling.MaxTokens = -1 }, "max_tokens"},
		"stops":        {func(r *Request) { r.Sampling.Stop = make([]string, MaxStops+1) }, "stop sequences"},
		"empty stop":   {func(r *Request) { r.Sampling.Stop = []string{""} }, "stop[0] is empty"},
		"top_logprobs": {func(r *Request) { r.TopLogProbs = 21 }, "top_logprobs"},
		"model name":   {func(r *Request) { r.Model = strings.Repeat("m", 300) }, "model is 300 bytes"},
	} {
		r := validRequest()
		tc.mut(r)
		err := r.Validate()
		if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "infer: ") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// The largest valid request fits the default request frame.
	big := validRequest()
	big.Messages = make([]inference.Message, MaxMessages)
	for i := range big.Messages {
		big.Messages[i] = inference.Message{Role: "user", Content: strings.Repeat("z", (MaxTextBytes-64)/MaxMessages)}
	}
	b, err := cborx.Marshal(big)
	if err := big.Validate(); err != nil {
		t.Fatal(err)
	}
	if err != nil || len(b) > DefaultMaxRequestSize {
		t.Fatalf("largest request: %d bytes, %v", len(b), err)
	}
}

// TestDecodeBoundedAllocation feeds declared lengths far beyond the input.
// Log-probs in a token frame: what a client could not show (NaN, an
// infinity, invalid UTF-8) or that is out of bounds is refused on both
// sides of the wire.
func TestTokenFrameLogProbsChecked(t *testing.T) {
	good := terms.TokenLogProbs{Token: "a", LogProb: -0.25, Top: []terms.TopLogProb{{Token: "a", LogProb: -0.25}}}
	if _, err := encodeFrame(&Frame{Token: &TokenFrame{Text: "a", LogProbs: []terms.TokenLogProbs{good}}}); err != nil {
		t.Fatalf("good log-probs refused: %v", err)
	}
	long := strings.Repeat("x", maxShortLen+1)
	many := make([]terms.TopLogProb, MaxTopLogProbs+1)
	for name, lp := range map[string]terms.TokenLogProbs{
		"NaN":             {Token: "a", LogProb: float32(math.NaN())},
		"-Inf":            {Token: "a", LogProb: float32(math.Inf(-1))},
		"alternative Inf": {Token: "a", Top: []terms.TopLogProb{{Token: "b", LogProb: float32(math.Inf(1))}}},
		"invalid UTF-8":   {Token: "\xff"},
		"long token":      {Token: long},
		"long bytes":      {Token: "a", Bytes: []byte(long)},
		"too many top":    {Token: "a", Top: many},
	} {
		f := &Frame{Token: &TokenFrame{Text: "a", LogProbs: []terms.TokenLogProbs{lp}}}
		if _, err := encodeFrame(f); !errors.Is(err, ErrMalformedFrame) {
			t.Errorf("%s: encode: %v, want ErrMalformedFrame", name, err)
		}
		b, err := cborx.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeFrame(b, DefaultMaxFrameSize); !errors.Is(err, ErrMalformedFrame) {
			t.Errorf("%s: decode: %v, want ErrMalformedFrame", name, err)
		}
	}
	tooMany := make([]terms.TokenLogProbs, maxLogProbTokens+1)
	for i := range tooMany {
		tooMany[i] = good
	}
	if _, err := encodeFrame(&Frame{Token: &TokenFrame{LogProbs: tooMany}}); !errors.Is(err, ErrMalformedFrame) {
		t.Errorf("%d entries: %v, want ErrMalformedFrame", len(tooMany), err)
	}
}

func TestDecodeBoundedAllocation(t *testing.T) {
	for _, in := range [][]byte{
		{0xa1, 0x05, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},       // Messages: 2^64-1 elements
		{0xa1, 0x01, 0x5a, 0xff, 0xff, 0xff, 0xff},                               // Nonce: 4 GiB byte string
		{0xa1, 0x01, 0xa1, 0x02, 0x9a, 0xff, 0xff, 0xff, 0xff},                   // TokenIDs: 2^32-1 elements
		{0xa1, 0x01, 0xa1, 0x03, 0x81, 0x9a, 0x00, 0x10, 0x00, 0x00},             // TopK[0]: 2^20 entries
		{0xa1, 0x03, 0xa1, 0x03, 0x7a, 0x7f, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00}, // Message: 2 GiB text
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err1 := decodeRequest(in, DefaultMaxRequestSize)
		_, err2 := decodeFrame(in, DefaultMaxFrameSize)
		runtime.ReadMemStats(&after)
		if err1 == nil || err2 == nil {
			t.Fatalf("%x decoded", in)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Fatalf("%x: allocated %d bytes", in, d)
		}
	}
	if _, err := decodeFrame(make([]byte, 100), 99); err == nil {
		t.Fatal("input over the limit decoded")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	good, _ := cborx.Marshal(validRequest())
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Add([]byte{0xa1, 0x05, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := decodeRequest(in, DefaultMaxRequestSize)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		// An accepted request re-encodes to a stable, valid form.
		b1, err := cborx.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		req2, err := decodeRequest(b1, DefaultMaxRequestSize)
		if err != nil {
			t.Fatalf("re-encoded request refused: %v", err)
		}
		if b2, _ := cborx.Marshal(req2); !bytes.Equal(b1, b2) {
			t.Fatalf("unstable encoding %x vs %x", b1, b2)
		}
	})
}

func FuzzDecodeFrame(f *testing.F) {
	for _, fr := range []*Frame{
		{Token: &TokenFrame{Text: "hi", TokenIDs: []int{1, 2}, TopK: [][]inference.LogProb{{{ID: 1, LogProb: -0.1}}}}},
		{Token: &TokenFrame{Text: "\uFFFD", LogProbs: []terms.TokenLogProbs{{Token: "\uFFFD", LogProb: -0.5, Bytes: []byte{0xe2},
			Top: []terms.TopLogProb{{Token: "a", LogProb: -0.5}, {Token: "\uFFFD", LogProb: -2, Bytes: []byte{0xe2}}}}}}},
		{Final: &FinalFrame{FinishReason: "stop", PromptTokens: 3, CompletionTokens: 2, Receipt: []byte{1}}},
		{Error: &ErrorFrame{Status: 429, Code: "rate_limited", RetryAfterMs: 10, Retryable: true}},
		{Final: &FinalFrame{FinishReason: "stop", Receipt: []byte{1}, Experts: []ExpertUse{paidUse(f),
			{Holder: []byte(testHolder(f, 2)), Machine: make([]byte, MachineIDSize), ExpertTokens: 3, Unpaid: UnpaidFree}}}},
	} {
		b, _ := cborx.Marshal(fr)
		f.Add(b)
	}
	f.Add([]byte{0xa1, 0x01, 0xa1, 0x02, 0x9a, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, err := decodeFrame(in, DefaultMaxFrameSize)
		if err != nil {
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error %v does not wrap ErrMalformedFrame", err)
			}
			return
		}
		// What a client accepts, a server can send.
		b1, err := encodeFrame(fr)
		if err != nil {
			t.Fatalf("accepted frame not sendable: %v", err)
		}
		fr2, err := decodeFrame(b1, DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("re-encoded frame refused: %v", err)
		}
		if b2, _ := cborx.Marshal(fr2); !bytes.Equal(b1, b2) {
			t.Fatalf("unstable encoding %x vs %x", b1, b2)
		}
	})
}

// decodeRequest is the server's decoding of a request frame without the
// network check: strict decoding, then validation.
func decodeRequest(b []byte, max int) (*Request, error) {
	req, err := unmarshalRequest(b, max)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return req, nil
}

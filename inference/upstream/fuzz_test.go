package upstream

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// FuzzReadStream feeds an upstream's SSE body, as a misbehaving engine
// might send it, to the stream reader: it never panics, and what it
// accepts is a finished answer with sane counts whose deltas spell its
// text.
func FuzzReadStream(f *testing.F) {
	chunk := func(s string) string { return "data: " + s + "\n\n" }
	f.Add([]byte(chunk(`{"choices":[{"delta":{"content":"hi"},"logprobs":{"content":[{"token":"hi","logprob":-0.5,"bytes":[104,105],"top_logprobs":[{"token":"hi","logprob":-0.5}]}]}}]}`)+
		chunk(`{"choices":[{"delta":{},"finish_reason":"stop"}]}`)+chunk(`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)+"data: [DONE]\n\n"), true, 1)
	f.Add([]byte(chunk(`{"choices":[{"text":"a","logprobs":{"tokens":["a"],"token_logprobs":[-1],"top_logprobs":[{"a":-1,"b":-2}]},"finish_reason":"length"}]}`)), false, 2)
	f.Add([]byte(chunk(`{"choices":[],"usage":{"prompt_tokens":-4,"completion_tokens":1}}`)), true, 0)
	f.Add([]byte(chunk(`{"error":{"message":"boom"}}`)), true, 0)
	f.Add([]byte(": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n"), true, 0)
	f.Fuzz(func(t *testing.T, body []byte, chat bool, k int) {
		k = max(0, min(k, 20))
		var streamed strings.Builder
		res, err := readStream(bufio.NewReader(bytes.NewReader(body)), &Request{Chat: chat, TopLogProbs: k}, func(d Delta) error {
			streamed.WriteString(d.Text)
			for _, lp := range d.LogProbs {
				if lp.Bytes != nil && string(lp.Bytes) == lp.Token {
					t.Fatalf("delta keeps raw bytes equal to its token's text: %q", lp.Token)
				}
			}
			return nil
		})
		if err != nil {
			return
		}
		if res.FinishReason == "" || len(res.FinishReason) > maxFinishReason || res.PromptTokens < 0 || res.CompletionTokens < 0 {
			t.Fatalf("accepted %+v", res)
		}
		if res.Text != streamed.String() {
			t.Fatalf("result text %q, deltas %q", res.Text, streamed.String())
		}
	})
}

package gateway

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/breaker"
)

// TestIntakeNamesTheField: every protocol limit is checked before quoting
// or routing, answered 400 naming the field, and no provider is called.
func TestIntakeNamesTheField(t *testing.T) {
	many := make([]inference.Message, infer.MaxMessages+1)
	for i := range many {
		many[i] = inference.Message{Role: "user", Content: "x"}
	}
	for _, c := range []struct {
		param string
		edit  func(*Request)
	}{
		{"messages", func(r *Request) { r.Messages = many }},
		{"messages", func(r *Request) { r.Messages = nil }},
		{"messages", func(r *Request) { r.Messages[0].Content = strings.Repeat("x", infer.MaxTextBytes+1) }},
		{"messages[0].role", func(r *Request) { r.Messages[0].Role = "robot" }},
		{"messages[0].content", func(r *Request) { r.Messages[0].Content = "\xff" }},
		{"prompt", func(r *Request) { r.Chat, r.Messages, r.Prompt = false, nil, "\xfe" }},
		{"max_tokens", func(r *Request) { r.Sampling.MaxTokens = infer.MaxMaxTokens + 1 }},
		{"max_tokens", func(r *Request) { r.Sampling.MaxTokens = -1 }},
		{"top_k", func(r *Request) { r.Sampling.TopK = -1 }},
		{"top_p", func(r *Request) { r.Sampling.TopP = 1.5 }},
		{"temperature", func(r *Request) { r.Sampling.Temperature = 3 }},
		{"stop", func(r *Request) { r.Sampling.Stop = make([]string, infer.MaxStops+1) }},
		{"stop[1]", func(r *Request) { r.Sampling.Stop = []string{"a", ""} }},
		{"top_logprobs", func(r *Request) { r.TopLogProbs = infer.MaxTopLogProbs + 1 }},
		{"model", func(r *Request) { r.Model = "" }},
	} {
		inBubble(t, func(t *testing.T, st *bubbleLedger) {
			m := newMarket(t, st, 1, testConfig(), answer(ms, "ok"))
			req := request()
			c.edit(req)
			_, _, err := route(t, m, req)
			var ge *Error
			if !errors.As(err, &ge) || ge.Status != http.StatusBadRequest || ge.Param != c.param {
				t.Fatalf("%s: %v (param %q)", c.param, err, paramOf(ge))
			}
			if n := len(m.calls()); n != 0 {
				t.Fatalf("%s: %d calls for an invalid request", c.param, n)
			}
		})
	}
	if err := Validate(request()); err != nil {
		t.Fatalf("a valid request: %v", err)
	}
}

func paramOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Param
}

// TestProviderRefusalIsNeutral: a request the provider refuses as invalid
// is a 400 to the buyer, not retried elsewhere, and never counts against
// the provider: no breaker failure, no failed call reported.
func TestProviderRefusalIsNeutral(t *testing.T) {
	for _, code := range []string{terms.CodeBadRequest, terms.CodeGenerationRefused} {
		inBubble(t, func(t *testing.T, st *bubbleLedger) {
			refuse := func(int, *infer.Request) script {
				return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusBadRequest, Code: code, Message: "prompt too long"}}
			}
			m := newMarket(t, st, 2, testConfig(), refuse, answer(ms, "ok"))
			for range 2 * breaker.DefaultFailures {
				_, _, err := route(t, m, request())
				var ge *Error
				if !errors.As(err, &ge) || ge.Status != http.StatusBadRequest || ge.Code != code {
					t.Fatalf("%s: %v", code, err)
				}
			}
			if n := len(m.calls()); n != 2*breaker.DefaultFailures {
				t.Fatalf("%s: %d calls: a refusal was retried elsewhere", code, n)
			}
			if s := m.gw.breakers.Get(m.provs[0].id).Snapshot(); s.State != breaker.Closed || s.ConsecutiveFailures != 0 {
				t.Fatalf("%s: breaker %+v", code, s)
			}
			if rs := m.reports(); len(rs) != 0 {
				t.Fatalf("%s: buyer faults reported as calls: %+v", code, rs)
			}
		})
	}
}

// TestTransportRefusalIsNeutral: a request the transport's own check
// refuses (a limit the gateway's intake did not know) is the buyer's too.
func TestTransportRefusalIsNeutral(t *testing.T) {
	g := &Gateway{}
	err := errors.Join(infer.ErrInvalidRequest, errors.New("new limit"))
	if o := g.outcome(false, err); o.Kind != breaker.Neutral {
		t.Fatalf("outcome %+v", o)
	}
	if !isPermanent(classify(err)) {
		t.Fatal("an invalid request was retried elsewhere")
	}
}

func isPermanent(err error) bool { return strings.HasPrefix(err.Error(), "permanent:") }

// FuzzValidate: Validate never panics, and whatever it accepts the infer
// protocol accepts too.
func FuzzValidate(f *testing.F) {
	f.Add("tiny", true, "user", "hi", "", 16, 40, 0.9, 0.7, "\n", 0)
	f.Add("", false, "", "", "prompt", -1, -1, 2.0, 9.0, "", 30)
	f.Fuzz(func(t *testing.T, model string, chat bool, role, content, prompt string, maxTokens, topK int, topP, temp float64, stop string, topLP int) {
		r := &Request{Model: model, Chat: chat, Prompt: prompt, TopLogProbs: topLP, Verification: terms.VerifyNone,
			Sampling: inference.Sampling{MaxTokens: maxTokens, TopK: topK, TopP: topP, Temperature: temp}}
		if chat {
			r.Messages, r.Prompt = []inference.Message{{Role: role, Content: content}}, ""
		}
		if stop != "" {
			r.Sampling.Stop = []string{stop}
		}
		err := Validate(r)
		var ge *Error
		if err != nil && (!errors.As(err, &ge) || ge.Status != http.StatusBadRequest) {
			t.Fatalf("not a 400: %v", err)
		}
		if err == nil {
			ir := &infer.Request{Nonce: make([]byte, infer.NonceSize), ModelID: make([]byte, infer.ModelIDSize), Chat: r.Chat,
				Messages: r.Messages, Prompt: r.Prompt, Sampling: r.Sampling, TopLogProbs: r.TopLogProbs, Verification: r.Verification}
			if err := ir.Validate(); err != nil {
				t.Fatalf("intake accepted what the protocol refuses: %v", err)
			}
		}
	})
}

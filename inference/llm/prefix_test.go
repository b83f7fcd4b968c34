package llm_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

type turnOut struct {
	res  inference.Result
	toks []inference.Token
}

func genTurn(t *testing.T, e *llm.Engine, req inference.GenerateRequest) turnOut {
	t.Helper()
	var out turnOut
	res, err := e.Generate(context.Background(), req, func(tok inference.Token) error {
		out.toks = append(out.toks, tok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.res = res
	return out
}

// TestPrefixCacheBitIdentical runs a four-turn conversation on an engine
// whose cache carries each turn into the next and on one without a cache:
// every token, log-prob and text must be the same, and from turn 2 on the
// warm engine must report the shared prefix as cached.
// The sliding-window architecture runs it too: its cached prefixes must
// hold the keys a window still needs.
func TestPrefixCacheBitIdentical(t *testing.T) {
	for _, o := range []modelgen.GenOptions{tinyOptions(), archOptions()["gemma3"]} {
		prefixCacheBitIdentical(t, o)
	}
}

func prefixCacheBitIdentical(t *testing.T, o modelgen.GenOptions) {
	warm := open(t, o, llm.Options{Threads: 2, PrefillChunk: 7})
	cold := open(t, o, llm.Options{Threads: 1, CacheBytes: -1})
	msgs := chat("Tell me about the sea and the small town by it.")
	sp := inference.Sampling{Temperature: 0.8, TopP: 0.95, Seed: 7, MaxTokens: 12}
	var prevState []int
	for turn := 1; turn <= 4; turn++ {
		req := inference.GenerateRequest{Messages: msgs, Sampling: sp, LogProbs: 3}
		c := genTurn(t, cold, req)
		req.CacheKey = "s1"
		w := genTurn(t, warm, req)
		if !reflect.DeepEqual(w.toks, c.toks) || w.res.Text != c.res.Text || !reflect.DeepEqual(w.res.Tokens, c.res.Tokens) {
			t.Fatalf("turn %d: cached run differs from a cold run:\nwarm %q %v\ncold %q %v", turn, w.res.Text, w.res.Tokens, c.res.Text, c.res.Tokens)
		}
		if c.res.CachedTokens != 0 {
			t.Fatalf("turn %d: engine without a cache reports %d cached tokens", turn, c.res.CachedTokens)
		}
		if turn == 1 && w.res.CachedTokens != 0 {
			t.Fatalf("first turn reports %d cached tokens", w.res.CachedTokens)
		}
		if turn > 1 {
			want := min(llm.CommonPrefix(prevState, w.res.Prompt), len(w.res.Prompt)-1)
			if w.res.CachedTokens != want || want == 0 {
				t.Fatalf("turn %d: cached %d tokens, want %d (the shared prefix)", turn, w.res.CachedTokens, want)
			}
		}
		// The last sampled token is never fed: the state ends before it.
		prevState = append(append([]int(nil), w.res.Prompt...), w.res.Tokens[:len(w.res.Tokens)-1]...)
		msgs = append(msgs, inference.Message{Role: "assistant", Content: w.res.Text},
			inference.Message{Role: "user", Content: fmt.Sprintf("And then, part %d?", turn)})
	}
}

// TestPrefillWarmsSession: the state a successor pre-fills from a sealed
// token list serves the next turn with the whole list cached, and the
// answer is the cold engine's.
func TestPrefillWarmsSession(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{Threads: 2})
	cold := open(t, tinyOptions(), llm.Options{CacheBytes: -1})
	history := append(chat("Hello there."), inference.Message{Role: "assistant", Content: "Hi. What do you need?"})
	state, err := e.EncodePrompt(inference.GenerateRequest{Messages: history})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Prefill(context.Background(), "s2", state); err != nil {
		t.Fatal(err)
	}
	if n, b := e.CacheStats(); n != 1 || b <= 0 {
		t.Fatalf("cache holds %d entries, %d bytes after a prefill", n, b)
	}
	next := append(history, inference.Message{Role: "user", Content: "A story, please."})
	sp := inference.Sampling{MaxTokens: 8, Seed: 3}
	w := genTurn(t, e, inference.GenerateRequest{Messages: next, Sampling: sp, CacheKey: "s2"})
	c := genTurn(t, cold, inference.GenerateRequest{Messages: next, Sampling: sp})
	if w.res.Text != c.res.Text || !reflect.DeepEqual(w.res.Tokens, c.res.Tokens) {
		t.Fatalf("prefilled answer %q differs from cold %q", w.res.Text, c.res.Text)
	}
	// The state ends with the opened assistant turn, the next prompt with
	// a user turn: all but those few header tokens are shared.
	if want := llm.CommonPrefix(state, w.res.Prompt); w.res.CachedTokens != want || want < len(state)-8 {
		t.Fatalf("cached %d tokens, want %d of a %d-token state", w.res.CachedTokens, want, len(state))
	}
	// Another session sharing the system prompt copies the prefix and
	// leaves s2's state in place.
	other := genTurn(t, e, inference.GenerateRequest{Messages: chat("Something else entirely."), Sampling: sp, CacheKey: "s3"})
	if other.res.CachedTokens == 0 {
		t.Fatal("a session sharing the system prompt reused nothing")
	}
	if n, _ := e.CacheStats(); n != 2 {
		t.Fatalf("cache holds %d entries, want s2 and s3", n)
	}
	// Without a key nothing is reused or kept.
	anon := genTurn(t, e, inference.GenerateRequest{Messages: next, Sampling: sp})
	if anon.res.CachedTokens != 0 || anon.res.Text != c.res.Text {
		t.Fatalf("call without a key: cached %d, text %q", anon.res.CachedTokens, anon.res.Text)
	}
	if n, _ := e.CacheStats(); n != 2 {
		t.Fatalf("a call without a key changed the cache to %d entries", n)
	}
}

// TestPrefixCacheBudget: the cache never holds more than its budget, and
// the least recently used session goes first.
func TestPrefixCacheBudget(t *testing.T) {
	seqOf := func(tok int) []int {
		out := make([]int, 100)
		for i := range out {
			out[i] = tok
		}
		return out
	}
	ctx := context.Background()
	probe := open(t, tinyOptions(), llm.Options{})
	if err := probe.Prefill(ctx, "probe", seqOf(1)); err != nil {
		t.Fatal(err)
	}
	_, one := probe.CacheStats()
	budget := 2*one + one/2
	e := open(t, tinyOptions(), llm.Options{CacheBytes: budget})
	for i := 0; i < 4; i++ {
		if err := e.Prefill(ctx, fmt.Sprint("k", i), seqOf(i+1)); err != nil {
			t.Fatal(err)
		}
		if _, b := e.CacheStats(); b > budget {
			t.Fatalf("cache holds %d bytes over its budget %d", b, budget)
		}
	}
	if n, _ := e.CacheStats(); n != 2 {
		t.Fatalf("cache holds %d entries, want the 2 that fit", n)
	}
	sp := inference.Sampling{MaxTokens: 1}
	// k0 was the least recently used: evicted, it starts cold; k3 is warm.
	if r := genTurn(t, e, inference.GenerateRequest{PromptTokens: append(seqOf(1), 5), Sampling: sp, CacheKey: "k0"}); r.res.CachedTokens != 0 {
		t.Fatalf("evicted session reused %d tokens", r.res.CachedTokens)
	}
	if r := genTurn(t, e, inference.GenerateRequest{PromptTokens: append(seqOf(4), 5), Sampling: sp, CacheKey: "k3"}); r.res.CachedTokens != 100 {
		t.Fatalf("warm session reused %d tokens, want 100", r.res.CachedTokens)
	}
}

func TestPrefillRejects(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{MaxContext: 64})
	off := open(t, tinyOptions(), llm.Options{CacheBytes: -1})
	ctx := context.Background()
	long := make([]int, 64)
	for _, c := range []struct {
		name string
		e    *llm.Engine
		key  string
		toks []int
		want string
	}{
		{"no key", e, "", []int{1, 2}, "no cache key"},
		{"no tokens", e, "k", nil, "no tokens"},
		{"vocabulary", e, "k", []int{1, 1 << 20}, "outside the vocabulary"},
		{"context", e, "k", long, "no room"},
		{"cache off", off, "k", []int{1}, "cache is off"},
	} {
		err := c.e.Prefill(ctx, c.key, c.toks)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	if n, _ := e.CacheStats(); n != 0 {
		t.Fatalf("rejected prefills left %d entries", n)
	}
}

package node

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// fakeEngine is an OpenAI-compatible engine outside the system that a
// provider fronts with engine = "upstream". What it does with each request
// is a script the test sets, so it can misbehave in every way a real engine
// does; it counts the requests it saw and those whose caller gave up on
// them (the request context was cancelled while it was still answering).
type fakeEngine struct {
	url       string
	hits      atomic.Int64
	cancelled atomic.Int64
	// prefixRefused counts the refusals noPrefix made (not hits).
	prefixRefused atomic.Int64
	// down makes the engine dead: every connection, health checks
	// included, is reset; deadHits counts the completions sent to it.
	down     atomic.Bool
	deadHits atomic.Int64
	// chatOnly answers 404 to /completions, as an engine that serves
	// only chat does.
	chatOnly bool
	// noPrefix refuses (400) every chat request that asks it to continue
	// a final assistant message, as an engine without prefill does.
	noPrefix bool

	mu     sync.Mutex
	bodies []map[string]any    // every completion request's JSON body
	script func(hit int) fault // hit counts from 1 since the last set
	base   int64
	times  []time.Time // when each request came
}

// fault is how the fake answers one request. The zero value streams a
// complete, well-formed answer of fakeTokens tokens.
type fault struct {
	status     int    // answer with this HTTP error status and body instead of a stream
	retryAfter string // the Retry-After header of an error answer
	body       string
	reset      bool          // reset the connection before any header
	first, gap time.Duration // before the first token; between tokens
	tokens     int           // tokens in the answer (default fakeTokens)
	breakAt    int           // after this many tokens, break the stream the way how says
	how        string        // "stall", "cut", "malformed", "eof" (ends with neither finish nor [DONE])
	noDone     bool          // a complete answer whose stream ends without [DONE]
	empty      bool          // 200, a role delta, finish "stop", zero usage, [DONE]: nothing at all
	word       func(i int) string
	claim      [2]int // the usage it reports (prompt, completion); zero: the truth
}

// fakeTokens is the length of a fake answer; requests ask for more.
const fakeTokens = 8

// fakeWord is the fake's i-th token: "w0 w1 w2 …".
func fakeWord(i int) string { return fmt.Sprintf("w%d ", i) }

// fakeText is the fake's complete answer.
func fakeText(n int, word func(int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(word(i))
	}
	return b.String()
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	fe := &fakeEngine{script: func(int) fault { return fault{} }}
	srv := httptest.NewServer(http.HandlerFunc(fe.serve))
	t.Cleanup(srv.Close)
	fe.url = srv.URL + "/v1"
	return fe
}

// set replaces the script; hits restart from 1.
func (fe *fakeEngine) set(script func(hit int) fault) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	fe.script, fe.base = script, fe.hits.Load()
}

// always answers every request with f.
func (fe *fakeEngine) always(f fault) { fe.set(func(int) fault { return f }) }

// once answers the next request with f and later ones normally.
func (fe *fakeEngine) once(f fault) {
	fe.set(func(hit int) fault {
		if hit == 1 {
			return f
		}
		return fault{}
	})
}

func (fe *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if fe.down.Load() {
		if r.Method == http.MethodPost {
			fe.deadHits.Add(1)
		}
		reset(w)
		return
	}
	if engineHealthCheck(w, r) {
		return // not a hit: the script is about completions
	}
	if fe.chatOnly && !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	if fe.noPrefix && body["continue_final_message"] == true {
		fe.prefixRefused.Add(1)
		http.Error(w, `{"error":{"message":"continue_final_message is not supported","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	fe.mu.Lock()
	fe.bodies = append(fe.bodies, body)
	n := fe.hits.Add(1)
	fe.times = append(fe.times, time.Now())
	f := fe.script(int(n - fe.base))
	fe.mu.Unlock()
	ctx := r.Context()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			fe.cancelled.Add(1)
			return false
		}
	}
	switch {
	case f.reset:
		reset(w)
		return
	case f.status != 0:
		w.Header().Set("Content-Type", "application/json")
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.body)
		return
	}
	if f.empty {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":null}]}\n\n")
		_, _ = io.WriteString(w, sseChunk("", "stop"))
		_, _ = io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":0}}\n\ndata: [DONE]\n\n")
		return
	}
	if f.tokens == 0 {
		f.tokens = fakeTokens
	}
	if f.word == nil {
		f.word = fakeWord
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	if !wait(f.first) {
		return
	}
	for i := range f.tokens {
		if i > 0 && !wait(f.gap) {
			return
		}
		if f.breakAt > 0 && i == f.breakAt {
			switch f.how {
			case "stall":
				wait(30 * time.Second)
				return
			case "cut":
				reset(w) // mid-body: the chunked stream is cut
				return
			case "malformed":
				_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"w\n\n")
			}
			fl.Flush()
			return // "eof" and "malformed": the body ends here
		}
		_, _ = io.WriteString(w, sseChunk(f.word(i), ""))
		fl.Flush()
	}
	if f.claim == [2]int{} {
		f.claim = [2]int{5, f.tokens}
	}
	_, _ = io.WriteString(w, sseChunk("", "stop"))
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\n", f.claim[0], f.claim[1])
	if !f.noDone {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
	fl.Flush()
}

// reset takes the connection from the server and resets it (a TCP RST,
// not a clean close), as a crashed engine's connection ends.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// errorBody is an OpenAI error object.
func errorBody(typ, code, msg string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"code":%q}}`, msg, typ, code)
}

// waitCancelled waits until the fake has seen n cancelled requests in all.
func (fe *fakeEngine) waitCancelled(t *testing.T, n int64) {
	t.Helper()
	nodetest.Eventually(t, 5*time.Second, fmt.Sprintf("%d cancelled requests at the fake engine", n), func() bool {
		return fe.cancelled.Load() >= n
	})
}

// since returns a function reporting how many requests the fake has seen
// since now.
func (fe *fakeEngine) since() func() int64 {
	base := fe.hits.Load()
	return func() int64 { return fe.hits.Load() - base }
}

// gaps returns the time between consecutive requests the fake saw after
// the first from (a hit count).
func (fe *fakeEngine) gaps(from int64) []time.Duration {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	var out []time.Duration
	for i := from + 1; i < int64(len(fe.times)); i++ {
		out = append(out, fe.times[i].Sub(fe.times[i-1]))
	}
	return out
}

// plainHits counts the completions that were not continuations: neither
// a buyer's continued answer nor the provider's start-up probe of how its
// engine continues.
func (fe *fakeEngine) plainHits() int {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	n := 0
	for _, b := range fe.bodies {
		if b["continue_final_message"] != true {
			n++
		}
	}
	return n
}

// lastBody is the JSON body of the latest completion request.
func (fe *fakeEngine) lastBody() map[string]any {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.bodies) == 0 {
		return nil
	}
	return fe.bodies[len(fe.bodies)-1]
}

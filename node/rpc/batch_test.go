package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// TestBatchTimeBound: a batch's calls share one deadline. The call running
// when it passes sees its context end; the calls after it are answered
// -32000 under their IDs without running, notifications not at all. The
// bubble's clock makes the 30 s bound pass at once.
func TestBatchTimeBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer()
		ran := 0
		s.Register("test_wait", func(ctx context.Context, _ json.RawMessage) (any, error) {
			ran++
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Hour):
				return "slept", nil
			}
		})
		start := time.Now()
		code, body := post(t, s, `[
			{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"a"}},
			{"jsonrpc":"2.0","id":2,"method":"test_wait"},
			{"jsonrpc":"2.0","id":3,"method":"test_wait"},
			{"jsonrpc":"2.0","method":"test_wait"},
			{"jsonrpc":"1.0","id":5,"method":"test_wait"},
			{"jsonrpc":"2.0","id":"six","method":"test_echo","params":{"text":"b"}}]`)
		if took := time.Since(start); took != DefaultBatchTimeout {
			t.Fatalf("the batch took %s of bubble time, want its bound %s", took, DefaultBatchTimeout)
		}
		if code != http.StatusOK || ran != 1 {
			t.Fatalf("%d, %d waits ran: %s", code, ran, body)
		}
		var out []struct {
			ID     json.RawMessage `json:"id"`
			Result any             `json:"result"`
			Error  *Error          `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out) != 5 {
			t.Fatalf("answers %v: %s", err, body)
		}
		want := []struct {
			id   string
			code int
		}{{"1", 0}, {"2", CodeInternalError}, {"3", CodeUnavailable}, {"5", CodeInvalidRequest}, {`"six"`, CodeUnavailable}}
		for i, w := range want {
			got := 0
			if out[i].Error != nil {
				got = out[i].Error.Code
			}
			if string(out[i].ID) != w.id || got != w.code {
				t.Errorf("answer %d: id %s code %d, want id %s code %d", i, out[i].ID, got, w.id, w.code)
			}
		}
		if !strings.Contains(out[2].Error.Message, "time bound of 30s") {
			t.Errorf("skipped call's message: %q", out[2].Error.Message)
		}
	})
}

func TestBatchLengthCap(t *testing.T) {
	s := NewServer(nil, WithMaxBatch(2))
	s.Register("test_ok", func(context.Context, json.RawMessage) (any, error) { return 1, nil })
	call := `{"jsonrpc":"2.0","id":1,"method":"test_ok"}`
	if _, body := post(t, s, "["+call+","+call+"]"); !strings.Contains(body, `"result":1`) {
		t.Fatalf("2 calls under a cap of 2: %s", body)
	}
	_, body := post(t, s, "["+call+","+call+","+call+"]")
	if !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "1..2 calls, not 3") {
		t.Fatalf("3 calls under a cap of 2: %s", body)
	}
	_, body = post(t, NewServer(nil), "["+strings.Repeat(call+",", DefaultMaxBatch)+call+"]")
	if !strings.Contains(body, `"code":-32600`) {
		t.Fatalf("%d calls under the default cap: %.200s", DefaultMaxBatch+1, body)
	}
}

// TestBodyCapByLength: a declared length over MaxBody is refused before
// the body is read (the reader here fails if it is touched).
func TestBodyCapByLength(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/rpc", nodetest.FailingBody(errors.New("read")))
	req.ContentLength = MaxBody + 1
	rec := httptest.NewRecorder()
	newTestServer().ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `"code":-32700`) || !strings.Contains(rec.Body.String(), "exceeds") {
		t.Fatalf("declared oversize: %s", rec.Body.String())
	}
}

// TestBodyReadErrors: a server-side refusal to read (Temporary) is -32000,
// a client's broken body -32700.
func TestBodyReadErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{{nodetest.ErrBusy, `"code":-32000,"message":"reading body: all slots busy"`}, {errors.New("reset"), `"code":-32700`}} {
		rec := httptest.NewRecorder()
		newTestServer().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rpc", nodetest.FailingBody(c.err)))
		if !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%v: %s, want %s", c.err, rec.Body.String(), c.want)
		}
	}
}

// FuzzSkipped: an item the deadline skips is answered as call would answer
// it in kind: the same notification status and the same ID.
func FuzzSkipped(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"hi"}}`,
		`{"jsonrpc":"2.0","method":"test_echo"}`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"1.0","id":"a","method":"x"}`, `{"id":1,"extra":2}`, `{}`, `5`, `[`, ``,
	} {
		f.Add([]byte(s))
	}
	s := newTestServer()
	f.Fuzz(func(t *testing.T, raw []byte) {
		ran, ranNotify := s.call(context.Background(), raw)
		skip, skipNotify := s.skipped(raw)
		if ranNotify != skipNotify {
			t.Fatalf("notify: ran %v, skipped %v", ranNotify, skipNotify)
		}
		if skipNotify {
			return
		}
		if skip == nil || skip.Error == nil || !bytes.Equal(ran.ID, skip.ID) {
			t.Fatalf("ran %+v, skipped %+v", ran, skip)
		}
	})
}

// WithMaxBatch caps the calls in one batch (n >= 1).
func WithMaxBatch(n int) Option {
	return func(s *Server) {
		if n >= 1 {
			s.maxBatch = n
		}
	}
}

package shell

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRPCEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":       "http://127.0.0.1:8080/rpc",
		"http://127.0.0.1:8080/":      "http://127.0.0.1:8080/rpc",
		"127.0.0.1:8080":              "http://127.0.0.1:8080/rpc",
		"https://node.example/api/":   "https://node.example/api/rpc",
		" http://127.0.0.1:8080/rpc ": "http://127.0.0.1:8080/rpc",
	} {
		got, err := rpcEndpoint(in)
		if err != nil || got != want {
			t.Errorf("rpcEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://host", "http://", "http://[::1"} {
		if _, err := rpcEndpoint(bad); err == nil {
			t.Errorf("rpcEndpoint(%q) accepted", bad)
		}
	}
}

func TestCallSendsJSONRPC20(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/rpc" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		bodies = append(bodies, body)
		res := `{"ok":true}`
		if body["method"] == "nothing" {
			res = `null`
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(mustJSON(body["id"])) + `,"result":` + res + `}`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(t.Context(), "tenzro_x", map[string]int{"a": 1})
	if err != nil || string(res) != `{"ok":true}` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	res, err = c.Call(t.Context(), "nothing", nil)
	if err != nil || string(res) != "null" {
		t.Fatalf("null result: %s, %v", res, err)
	}
	if bodies[0]["jsonrpc"] != "2.0" || bodies[0]["method"] != "tenzro_x" || bodies[0]["id"] == bodies[1]["id"] {
		t.Errorf("requests %v", bodies)
	}
	if p, ok := bodies[0]["params"].(map[string]any); !ok || p["a"] != 1.0 {
		t.Errorf("params %v", bodies[0]["params"])
	}
	if _, ok := bodies[1]["params"]; ok {
		t.Errorf("nil params were sent: %v", bodies[1])
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestRPCErrorObjectShownClearly(t *testing.T) {
	node := newFakeNode(t)
	node.handle("tenzro_listTopics", func(context.Context, json.RawMessage) (any, *RPCError) {
		return nil, &RPCError{Code: -32602, Message: "unknown topic", Data: json.RawMessage(`{ "topic": "x" }`)}
	})
	_, err := runCmd(t, node, "topics")
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Fatalf("err %v, want an *RPCError", err)
	}
	want := "tenzro_listTopics: rpc error -32602 (invalid params): unknown topic\n  data: {\"topic\":\"x\"}"
	if err.Error() != want {
		t.Errorf("error shown as\n%s\nwant\n%s", err, want)
	}
	_, err = runCmd(t, node, "rpc tenzro_noSuchThing")
	if err == nil || err.Error() != "tenzro_noSuchThing: rpc error -32601 (method not found): method not found: tenzro_noSuchThing" {
		t.Errorf("unknown method: %v", err)
	}
	if got := (&RPCError{Code: -32050, Message: "busy"}).Error(); got != "rpc error -32050 (server error): busy" {
		t.Errorf("server error: %q", got)
	}
	if got := (&RPCError{Code: 7, Message: "app", Data: json.RawMessage("null")}).Error(); got != "rpc error 7: app" {
		t.Errorf("application error: %q", got)
	}
}

func TestUnreachableNode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	err = Run(t.Context(), Config{API: "http://" + addr, Out: new(strings.Builder), Err: new(strings.Builder)}, "info")
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("err %v, want *UnreachableError", err)
	}
	for _, want := range []string{"tenzro_nodeInfo: node unreachable at http://" + addr + "/rpc", "connection refused", "check --api"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	// The handler holds every request until the client gives up or the test
	// ends; release makes sure srv.Close never waits on a connection whose
	// close the server has not noticed yet.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := NewClient(srv.URL)
	c.timeout = 50 * time.Millisecond
	_, err := c.Call(t.Context(), "tenzro_slow", nil)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	c.timeout = time.Minute
	if _, err := c.Call(ctx, "tenzro_slow", nil); !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Errorf("cancel: %v", err)
	}
}

func TestNotJSONRPCAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"404":       {404, "404 page not found", "answered HTTP 404 Not Found, not JSON-RPC: 404 page not found"},
		"html 200":  {200, "<html>hi</html>", "malformed JSON-RPC response"},
		"no result": {200, `{"jsonrpc":"2.0","id":1}`, "neither result nor error"},
		"wrong id":  {200, `{"jsonrpc":"2.0","id":99,"result":1}`, "id 99, want 1"},
		"version":   {200, `{"jsonrpc":"1.0","id":1,"result":1}`, `jsonrpc is "1.0"`},
		"500 error": {500, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, "rpc error -32603 (internal error): boom"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
		}))
		c, _ := NewClient(srv.URL)
		_, err := c.Call(t.Context(), "tenzro_x", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tenzro_x: ") {
			t.Errorf("%s: err %v, want %q", name, err, tc.want)
		}
		srv.Close()
	}
}

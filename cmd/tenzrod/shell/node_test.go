package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// handler answers one JSON-RPC method: a result (marshalled unless it is a
// json.RawMessage) or an error object.
type handler func(ctx context.Context, params json.RawMessage) (any, *RPCError)

type recordedCall struct {
	Method string
	Params json.RawMessage
}

// fakeNode stands in for a node's JSON-RPC endpoint in unit tests.
type fakeNode struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	handlers map[string]handler
	calls    []recordedCall
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	n := &fakeNode{t: t, handlers: map[string]handler{}}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *fakeNode) handle(method string, h handler) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handlers[method] = h
}

// result makes method always answer the given raw JSON result.
func (n *fakeNode) result(method string, raw []byte) {
	n.handle(method, func(context.Context, json.RawMessage) (any, *RPCError) { return json.RawMessage(raw), nil })
}

func (n *fakeNode) callsTo(method string) []recordedCall {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []recordedCall
	for _, c := range n.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (n *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/rpc" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || req.JSONRPC != "2.0" || len(req.ID) == 0 {
		n.t.Errorf("fake node: bad JSON-RPC request (err %v): %+v", err, req)
		writeResponse(w, json.RawMessage("null"), nil, &RPCError{Code: -32600, Message: "invalid request"})
		return
	}
	n.mu.Lock()
	n.calls = append(n.calls, recordedCall{Method: req.Method, Params: req.Params})
	h := n.handlers[req.Method]
	n.mu.Unlock()
	if h == nil {
		writeResponse(w, req.ID, nil, &RPCError{Code: -32601, Message: "method not found: " + req.Method})
		return
	}
	res, rpcErr := h(r.Context(), req.Params)
	writeResponse(w, req.ID, res, rpcErr)
}

func writeResponse(w http.ResponseWriter, id json.RawMessage, result any, rpcErr *RPCError) {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		resp["error"] = rpcErr
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// standardNode serves every fixture under its method.
func standardNode(t *testing.T) *fakeNode {
	n := newFakeNode(t)
	n.result("tenzro_nodeInfo", fixture(t, "info.json"))
	n.result("tenzro_listPeers", fixture(t, "peers.json"))
	n.result("tenzro_listTopics", fixture(t, "topics.json"))
	n.result("tenzro_listProviders", fixture(t, "providers.json"))
	n.result("tenzro_findProviders", fixture(t, "dht_providers.json"))
	return n
}

// runCmd runs one command one-shot against node and returns what it printed.
func runCmd(t *testing.T, node *fakeNode, command string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(t.Context(), Config{API: node.srv.URL, Out: &out, Err: &errOut}, command)
	if errOut.Len() > 0 {
		t.Errorf("one-shot %q wrote to Err: %q", command, errOut.String())
	}
	return out.String(), err
}

// mustRun is runCmd for commands that must succeed.
func mustRun(t *testing.T, node *fakeNode, command string) string {
	t.Helper()
	out, err := runCmd(t, node, command)
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return out
}

// lineWith returns the fields of the first output line containing s.
func lineWith(t *testing.T, out, s string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.Fields(l)
		}
	}
	t.Fatalf("no line containing %q in:\n%s", s, out)
	return nil
}

// columnStart returns the byte offset at which s starts on the first line
// containing it, to check that tabwriter aligned the columns.
func columnStart(t *testing.T, out, s string) int {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, s); i >= 0 {
			return len([]rune(l[:i]))
		}
	}
	t.Fatalf("no %q in:\n%s", s, out)
	return -1
}

package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTimeout bounds one JSON-RPC call (long polls add their wait to it).
const DefaultTimeout = 10 * time.Second

// maxResponseBytes caps the size of one JSON-RPC response body.
const maxResponseBytes = 64 << 20

// Client is a minimal JSON-RPC 2.0 client of a tenzrod node's API.
type Client struct {
	endpoint string
	http     *http.Client
	timeout  time.Duration
	token    string
	nextID   atomic.Uint64
}

// SetToken makes every call carry `Authorization: Bearer token` ("" for
// none).
func (c *Client) SetToken(token string) { c.token = token }

// NewClient returns a client of the node API at api, e.g.
// "http://127.0.0.1:8080" (the scheme defaults to http; "/rpc" is appended
// unless the URL already ends in it).
func NewClient(api string) (*Client, error) {
	endpoint, err := rpcEndpoint(api)
	if err != nil {
		return nil, err
	}
	return &Client{endpoint: endpoint, http: &http.Client{}, timeout: DefaultTimeout}, nil
}

// Endpoint is the URL the client POSTs to.
func (c *Client) Endpoint() string { return c.endpoint }

func rpcEndpoint(api string) (string, error) {
	api = strings.TrimSpace(api)
	if api == "" {
		return "", errors.New("no node API URL given (use --api http://HOST:PORT)")
	}
	if !strings.Contains(api, "://") {
		api = "http://" + api
	}
	u, err := url.Parse(api)
	if err != nil {
		return "", fmt.Errorf("node API URL %q: %w", api, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("node API URL %q: scheme must be http or https", api)
	}
	if u.Host == "" {
		return "", fmt.Errorf("node API URL %q: no host", api)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/rpc") {
		u.Path += "/rpc"
	}
	return u.String(), nil
}

// RPCError is the error object of a JSON-RPC 2.0 response.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rpc error %d", e.Code)
	if name := rpcCodeName(e.Code); name != "" {
		fmt.Fprintf(&b, " (%s)", name)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if data := bytes.TrimSpace(e.Data); len(data) > 0 && string(data) != "null" {
		var compact bytes.Buffer
		if json.Compact(&compact, data) == nil {
			data = compact.Bytes()
		}
		b.WriteString("\n  data: ")
		b.Write(data)
	}
	return b.String()
}

func rpcCodeName(code int) string {
	switch {
	case code == -32700:
		return "parse error"
	case code == -32600:
		return "invalid request"
	case code == -32601:
		return "method not found"
	case code == -32602:
		return "invalid params"
	case code == -32603:
		return "internal error"
	case code <= -32000 && code >= -32099:
		return "server error"
	}
	return ""
}

// UnreachableError reports that the node's API could not be reached at all.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("node unreachable at %s: %v (is tenzrod running there? check --api)", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// TimeoutError reports that the node did not answer within the call's timeout.
type TimeoutError struct {
	URL   string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("node at %s did not answer within %s", e.URL, e.After)
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// HTTPError reports an HTTP answer that is not a JSON-RPC response.
type HTTPError struct {
	URL    string
	Status string
	Body   string
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("node at %s answered HTTP %s, not JSON-RPC", e.URL, e.Status)
	}
	return fmt.Sprintf("node at %s answered HTTP %s, not JSON-RPC: %s", e.URL, e.Status, e.Body)
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// Call invokes method with params (nil for none; otherwise marshalled to a
// JSON object or array) and returns the raw result. Errors name the method and
// are one of *RPCError, *UnreachableError, *TimeoutError, *HTTPError, a
// malformed-response error, or the cancellation of ctx.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.call(ctx, method, params, c.timeout)
}

func (c *Client) call(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	res, err := c.roundTrip(ctx, method, params, timeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return res, nil
}

func (c *Client) roundTrip(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var raw []byte
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		if err == nil {
			return c.decode(resp, raw, id)
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return nil, &TimeoutError{URL: c.endpoint, After: timeout}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return nil, &UnreachableError{URL: c.endpoint, Err: err}
}

func (c *Client) decode(resp *http.Response, raw []byte, id uint64) (json.RawMessage, error) {
	if len(raw) > maxResponseBytes {
		return nil, fmt.Errorf("response from %s larger than %d bytes", c.endpoint, maxResponseBytes)
	}
	var r rpcResponse
	if err := json.Unmarshal(raw, &r); err != nil || (r.Error == nil && r.Result == nil) {
		if resp.StatusCode/100 != 2 {
			return nil, &HTTPError{URL: c.endpoint, Status: resp.Status, Body: snippet(raw)}
		}
		if err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC response from %s: %w", c.endpoint, err)
		}
		return nil, fmt.Errorf("malformed JSON-RPC response from %s: neither result nor error", c.endpoint)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	if r.JSONRPC != "2.0" {
		return nil, fmt.Errorf("malformed JSON-RPC response from %s: jsonrpc is %q, want \"2.0\"", c.endpoint, r.JSONRPC)
	}
	if want := strconv.FormatUint(id, 10); string(bytes.TrimSpace(r.ID)) != want {
		return nil, fmt.Errorf("malformed JSON-RPC response from %s: id %s, want %s", c.endpoint, r.ID, want)
	}
	return r.Result, nil
}

func snippet(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

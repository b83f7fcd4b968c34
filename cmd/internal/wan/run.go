package wan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/internal/netlab"
)

// Node is one devnet node running in its namespace.
type Node struct {
	devnet.NodeEntry
	Host netlab.Host
	API  string // its API URL, reachable from inside Host.NS only
	cmd  *exec.Cmd
	done <-chan struct{}
}

// Start runs n from its home inside its namespace with bin, output
// appended to the home's node.log.
func (n *Node) Start(bin string) error {
	c := netlab.Command(n.Host.NS, append([]string{bin}, devproc.RestartArgs(n.NodeEntry)...)...)
	done, err := devproc.StartLogged(c, filepath.Join(n.Home, "node.log"), nil)
	if err != nil {
		return fmt.Errorf("wan: %s: %w", n.Name, err)
	}
	n.cmd, n.done = c, done
	return nil
}

// Stop ends n with SIGTERM and waits for it, killing it after grace; an
// error names a node that did not stop on its own.
func (n *Node) Stop(grace time.Duration) error {
	if n.cmd == nil {
		return nil
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
		return nil
	case <-time.After(grace):
	}
	_ = n.cmd.Process.Kill()
	<-n.done
	return fmt.Errorf("wan: %s (pid %d) did not stop within %s of SIGTERM", n.Name, n.cmd.Process.Pid, grace)
}

// Client is an HTTP client that reaches n's API (its connections open in
// n's namespace).
func (n *Node) Client(timeout time.Duration) *http.Client {
	c := netlab.HTTPClient(n.Host.NS)
	c.Timeout = timeout
	return c
}

// RPC calls method at n's API, decoding its result into result; it gives
// up after limit.
func (n *Node) RPC(method string, params, result any, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return rpcAt(ctx, n.Client(limit), n.API, method, params, result)
}

// StopAll stops every node, in reverse order, and joins the errors.
func StopAll(nodes []*Node, grace time.Duration) error {
	var errs []error
	for i := len(nodes) - 1; i >= 0; i-- {
		errs = append(errs, nodes[i].Stop(grace))
	}
	return errors.Join(errs...)
}

// rpcAt posts one JSON-RPC 2.0 request to api's /rpc.
func rpcAt(ctx context.Context, c *http.Client, api, method string, params, result any) error {
	body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		body["params"] = params
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("wan: rpc %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/rpc", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("wan: rpc %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("wan: rpc %s: %w", method, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("wan: rpc %s: status %d: %w", method, resp.StatusCode, err)
	}
	if out.Error != nil {
		return fmt.Errorf("wan: rpc %s: %d %s", method, out.Error.Code, out.Error.Message)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		return fmt.Errorf("wan: rpc %s: %w", method, err)
	}
	return nil
}

package devnet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
)

// ControlSocket is the running devnet's control socket inside Dir (a Unix
// socket, owner-only): `tenzrod devnet add-provider` asks the devnet
// through it to start and supervise a provider home it prepared, so the
// new provider lives and stops with the others.
const ControlSocket = "devnet.sock"

// AddRequest asks the running devnet to supervise the provider home
// Dir/Name (already initialised, funded and registered).
type AddRequest struct {
	Name string `json:"name"`
}

// AddResponse is the devnet's answer: the node as devnet.json now lists it.
type AddResponse struct {
	Node  NodeEntry `json:"node"`
	Error string    `json:"error,omitempty"`
}

// maxAddRequest bounds a request body; a real one is a few dozen bytes.
const maxAddRequest = 4 << 10

// addedName is what an added provider may be called: it names a directory
// directly inside Dir, nothing else.
var addedName = regexp.MustCompile(`^provider-[0-9]{1,4}$`)

// DecodeAddRequest reads one request strictly: a JSON object with a valid
// name and nothing else.
func DecodeAddRequest(b []byte) (AddRequest, error) {
	var r AddRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("devnet: control: bad request: %w", err)
	}
	if dec.More() {
		return r, errors.New("devnet: control: bad request: trailing data")
	}
	if !addedName.MatchString(r.Name) {
		return r, fmt.Errorf("devnet: control: name %q: want provider-N", r.Name)
	}
	return r, nil
}

// control serves ControlSocket for a running devnet.
type control struct {
	dir string
	bin string
	sup *supervisor
	out io.Writer

	mu sync.Mutex // guards m and the manifest file
	m  Manifest
}

// listenControl starts serving the control socket; the returned stop
// closes it and removes the socket file.
func listenControl(c *control) (stop func(), err error) {
	path := filepath.Join(c.dir, ControlSocket)
	_ = os.Remove(path) // a socket left by a devnet that died
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("devnet: control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("devnet: control socket: %w", err), l.Close())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /providers", c.handleAdd)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = os.Remove(path)
	}, nil
}

func (c *control) handleAdd(w http.ResponseWriter, r *http.Request) {
	answer := func(code int, resp AddResponse) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(resp)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAddRequest))
	if err != nil {
		answer(http.StatusBadRequest, AddResponse{Error: err.Error()})
		return
	}
	req, err := DecodeAddRequest(b)
	if err != nil {
		answer(http.StatusBadRequest, AddResponse{Error: err.Error()})
		return
	}
	e, err := c.add(r.Context(), req.Name)
	if err != nil {
		answer(http.StatusUnprocessableEntity, AddResponse{Error: err.Error()})
		return
	}
	answer(http.StatusOK, AddResponse{Node: e})
}

// add starts the provider home Dir/name under the supervisor, waits until
// it is healthy and lists it in devnet.json.
func (c *control) add(ctx context.Context, name string) (NodeEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.m.Nodes {
		if n.Name == name {
			return NodeEntry{}, fmt.Errorf("devnet: %s is already running (pid %d)", name, n.PID)
		}
	}
	if !c.sup.exited(name) {
		// Started by an earlier request that gave up waiting for it.
		return NodeEntry{}, fmt.Errorf("devnet: %s is already running (pid %d), not healthy yet", name, c.sup.pid(name))
	}
	home := filepath.Join(c.dir, name)
	cfg, err := node.Load(home)
	if err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: %s: %w", name, err)
	}
	if cfg.Role != node.RoleProvider {
		return NodeEntry{}, fmt.Errorf("devnet: %s is a %s home, not a provider", name, cfg.Role)
	}
	pid, err := p2p.PeerIDFromKeyFile(cfg.P2PConfig().KeyFile)
	if err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: %s: %w", name, err)
	}
	e := NodeEntry{Name: name, Role: string(node.RoleProvider), API: "http://" + cfg.API.Listen, Home: home}
	for _, a := range cfg.P2P.Listen {
		// The manifest lists addresses to dial: a wildcard listener is
		// reached on loopback.
		e.P2P = append(e.P2P, strings.Replace(a, "/ip4/0.0.0.0/", "/ip4/127.0.0.1/", 1)+"/p2p/"+pid.String())
	}
	p := nodePlan{entry: e, args: []string{string(node.RoleProvider), "--home", home}}
	if err := c.sup.start(c.bin, p); err != nil {
		return NodeEntry{}, err
	}
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := waitHealthy(wait, e.API, c.sup, name); err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: %s did not come up (see %s): %w", name, p.logPath(), err)
	}
	e.PID = c.sup.pid(name)
	c.m.Nodes = append(c.m.Nodes, e)
	if err := writeManifest(filepath.Join(c.dir, ManifestFile), c.m); err != nil {
		return NodeEntry{}, err
	}
	fmt.Fprintf(c.out, "devnet: %s added (pid %d, %s); devnet.json lists it\n", name, e.PID, e.API)
	return e, nil
}

// AskAdd asks the devnet running in dir to supervise the provider home
// dir/name; it returns the node as devnet.json lists it.
func AskAdd(ctx context.Context, dir, name string) (NodeEntry, error) {
	path := filepath.Join(dir, ControlSocket)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	body, err := json.Marshal(AddRequest{Name: name})
	if err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://devnet/providers", bytes.NewReader(body))
	if err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: no devnet answers on %s (is `tenzrod devnet --dir %s` running?): %w", path, dir, err)
	}
	defer resp.Body.Close()
	var r AddResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&r); err != nil {
		return NodeEntry{}, fmt.Errorf("devnet: control answer (status %d): %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return NodeEntry{}, fmt.Errorf("devnet: the devnet refused: %s", r.Error)
	}
	return r.Node, nil
}

// printAddHints tells how to add a provider to this devnet.
func printAddHints(w io.Writer, bin string, o Options, m Manifest) {
	fmt.Fprintf(w, "\nAdd a provider (funded from the faucet %s, registered, supervised by this devnet):\n", m.FaucetKey)
	fmt.Fprintf(w, "  %s devnet add-provider --dir %s\n", bin, o.Dir)
}

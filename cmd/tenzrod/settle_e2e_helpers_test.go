package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// procSet owns a devnet and every process a test started beside it, and
// stops them all at cleanup: restarted nodes first (SIGTERM, then SIGKILL
// after 15 s), then the devnet itself, whose every original child must be
// gone afterwards.
type procSet struct {
	t   *testing.T
	bin string
	dn  *exec.Cmd
	out bytes.Buffer
	m   devnet.Manifest

	mu    sync.Mutex
	extra []*exec.Cmd
}

// startDevnet runs `tenzrod devnet` in a fresh directory and waits for its
// manifest.
func startDevnet(t *testing.T, bin string, validators, providers, gateways int) *procSet {
	t.Helper()
	dir := t.TempDir()
	ps := &procSet{t: t, bin: bin}
	ps.dn = exec.Command(bin, "devnet", "--dir", dir, "--validators", strconv.Itoa(validators),
		"--providers", strconv.Itoa(providers), "--gateways", strconv.Itoa(gateways))
	ps.dn.Stdout, ps.dn.Stderr = &ps.out, &ps.out
	if err := ps.dn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ps.stop)
	manifest := filepath.Join(dir, devnet.ManifestFile)
	deadline := time.Now().Add(120 * time.Second)
	for {
		if b, err := os.ReadFile(manifest); err == nil && json.Unmarshal(b, &ps.m) == nil {
			return ps
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 120 s", manifest)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// node returns the manifest entry named name.
func (ps *procSet) node(name string) devnet.NodeEntry {
	for _, n := range ps.m.Nodes {
		if n.Name == name {
			return n
		}
	}
	ps.t.Fatalf("no node %s in the manifest", name)
	return devnet.NodeEntry{}
}

// start runs bin with args beside the devnet, output appended to logPath.
func (ps *procSet) start(logPath string, stdout io.Writer, args ...string) *exec.Cmd {
	ps.t.Helper()
	c := exec.Command(ps.bin, args...)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		ps.t.Fatal(err)
	}
	c.Stdout, c.Stderr = logf, logf
	if stdout != nil {
		c.Stdout = stdout
	}
	if err := c.Start(); err != nil {
		ps.t.Fatal(err)
	}
	go func() { _ = c.Wait(); logf.Close() }()
	ps.mu.Lock()
	ps.extra = append(ps.extra, c)
	ps.mu.Unlock()
	return c
}

// restart SIGKILLs the node's current process (pid) and starts it again
// from its home with the command the role runs; it returns the new pid.
func (ps *procSet) restart(n devnet.NodeEntry, pid int) int {
	ps.t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		ps.t.Fatalf("kill -9 %s (pid %d): %v", n.Name, pid, err)
	}
	waitDead(ps.t, n.Name, pid)
	cmd := n.Role
	if n.Role == "gateway" {
		cmd = "join" // the devnet runs its gateways as `tenzrod join --home`
	}
	return ps.start(filepath.Join(n.Home, "node.log"), nil, cmd, "--home", n.Home).Process.Pid
}

// waitDead waits until pid has exited (a killed child is reaped by the
// goroutine waiting on it), so a restart never races its predecessor for
// the home's locks and ports.
func waitDead(t *testing.T, name string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still alive 10 s after SIGKILL", name, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (ps *procSet) stop() {
	t := ps.t
	ps.mu.Lock()
	extra := ps.extra
	ps.mu.Unlock()
	for _, c := range extra {
		if alive(c.Process.Pid) {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, c := range extra {
		for alive(c.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(c.Process.Pid) {
			t.Errorf("%v (pid %d) did not stop within 15 s of SIGTERM", c.Args, c.Process.Pid)
			_ = c.Process.Kill()
		}
	}
	_ = ps.dn.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- ps.dn.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = ps.dn.Process.Kill()
		t.Errorf("devnet did not stop within 30 s")
	}
	for _, n := range ps.m.Nodes {
		if alive(n.PID) {
			t.Errorf("%s (pid %d) still running after the devnet stopped", n.Name, n.PID)
			_ = syscall.Kill(n.PID, syscall.SIGKILL)
		}
	}
	if t.Failed() {
		t.Logf("devnet output:\n%s", ps.out.String())
		for _, n := range ps.m.Nodes {
			b, _ := os.ReadFile(filepath.Join(n.Home, "node.log"))
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("%s: last lines of node.log:\n%s", n.Name, strings.Join(lines[max(0, len(lines)-25):], "\n"))
		}
	}
}

// signedRecord is what a buyer keeps of a response's
// tenzro.payment.signed.
type signedRecord struct {
	Payer         string `json:"payer"`
	Settler       string `json:"settler"`
	Provider      string `json:"provider_machine"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"`
	Sig           string `json:"sig"`
}

type tenzroPart struct {
	Tenzro *struct {
		Payment struct {
			Signed *signedRecord `json:"signed"`
		} `json:"payment"`
	} `json:"tenzro"`
}

func (p tenzroPart) signed() *signedRecord {
	if p.Tenzro == nil {
		return nil
	}
	return p.Tenzro.Payment.Signed
}

var callClient = &http.Client{Timeout: 30 * time.Second}

// chatOpts shape one paid call.
type chatOpts struct {
	stream    bool
	maxTokens int    // 0: 6, or 48 for a stream (long enough for a kill to land in it)
	pin       string // a provider peer ID the call must go to
	n         int    // makes the prompt, and so the request digest, unique
	onText    func() // called once, at a stream's first text
	noHedge   bool
}

// paidChat makes one chat completion at api (a routing node's base URL)
// with token and returns the signed payment record the response carried.
// A stream counts once its tenzro chunk arrived, even if the connection
// broke later: the buyer holds the record then.
func paidChat(ctx context.Context, api, token, model string, o chatOpts) (*signedRecord, error) {
	if o.maxTokens == 0 {
		o.maxTokens = 6
		if o.stream {
			o.maxTokens = 48
		}
	}
	body := map[string]any{"model": model, "max_tokens": o.maxTokens,
		"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("crash test call %d", o.n)}}}
	if o.stream {
		body["stream"] = true
	}
	opts := map[string]any{}
	if o.pin != "" {
		opts["provider"] = o.pin
	}
	if o.noHedge {
		opts["hedge"] = false
	}
	if len(opts) > 0 {
		body["tenzro"] = opts
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := callClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	if !o.stream {
		var p tenzroPart
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			return nil, fmt.Errorf("decode response: %w", err)
		}
		if p.signed() == nil {
			return nil, fmt.Errorf("response carries no signed payment record")
		}
		return p.signed(), nil
	}
	var got *signedRecord
	var streamErr string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		if o.onText != nil && strings.Contains(data, `"content":"`) && !strings.Contains(data, `"content":""`) {
			o.onText()
			o.onText = nil
		}
		if strings.HasPrefix(data, `{"error"`) {
			streamErr = data
		}
		var p tenzroPart
		if json.Unmarshal([]byte(data), &p) == nil && p.signed() != nil {
			got = p.signed()
		}
	}
	if got == nil {
		return nil, fmt.Errorf("stream ended without a signed payment record (%v %s)", sc.Err(), streamErr)
	}
	return got, nil
}

// failureKind shortens a call error to a class for counting.
func failureKind(err error) string {
	s := err.Error()
	switch {
	case strings.HasPrefix(s, "status "):
		if i := strings.Index(s, `"code":"`); i >= 0 {
			rest := s[i+len(`"code":"`):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return s[:len("status 000")] + " " + rest[:j]
			}
		}
		return s[:min(len(s), len("status 000"))]
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "EOF"), strings.Contains(s, "reset by peer"):
		return "connection broken"
	}
	return s[:min(len(s), 60)]
}

// metric reads one unlabelled series from a node's /metrics (0 if absent).
func metric(api, name string) (float64, error) {
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(api + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, sc.Err()
}

// quotedAt is how many providers the routing node at api quotes model at.
func quotedAt(api, model string) int {
	var qs []json.RawMessage
	if err := rpcCall(api, "tenzro_quoteInference", map[string]any{"model": model,
		"units": map[string]uint64{"input_tokens": 1, "output_tokens": 1}}, &qs); err != nil {
		return 0
	}
	return len(qs)
}

// waitFor polls cond every 100 ms until it holds, failing the test with
// what after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

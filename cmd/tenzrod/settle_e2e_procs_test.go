package main

import (
	"bytes"
	"encoding/json"
	"io"
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
func startDevnet(t *testing.T, bin string, validators, providers, gateways int, extra ...string) *procSet {
	t.Helper()
	return startDevnetIn(t, bin, t.TempDir(), validators, providers, gateways, extra...)
}

// startDevnetIn is startDevnet with the devnet's directory given.
// extra are further `tenzrod devnet` flags.
func startDevnetIn(t *testing.T, bin, dir string, validators, providers, gateways int, extra ...string) *procSet {
	t.Helper()
	ps := &procSet{t: t, bin: bin}
	ps.dn = exec.Command(bin, append([]string{"devnet", "--dir", dir, "--validators", strconv.Itoa(validators),
		"--providers", strconv.Itoa(providers), "--gateways", strconv.Itoa(gateways)}, extra...)...)
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

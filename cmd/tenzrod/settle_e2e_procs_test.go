package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// procSet owns a devnet and every process a test started beside it, and
// stops them all at cleanup: restarted nodes first (SIGTERM, then SIGKILL
// after 15 s), then the devnet itself, whose every original child must be
// gone afterwards.
type procSet struct {
	*devproc.Devnet
	t   *testing.T
	bin string

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
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dn, err := devproc.StartDevnet(ctx, devproc.Command(bin, dir, validators, providers, gateways, extra...), dir)
	if dn == nil {
		t.Fatal(err)
	}
	ps := &procSet{Devnet: dn, t: t, bin: bin}
	t.Cleanup(ps.stop)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// node returns the manifest entry named name.
func (ps *procSet) node(name string) devnet.NodeEntry {
	for _, n := range ps.M.Nodes {
		if n.Name == name {
			return n
		}
	}
	ps.t.Fatalf("no node %s in the manifest", name)
	return devnet.NodeEntry{}
}

// start runs bin with args beside the devnet, output appended to logPath
// (and its stdout also to stdout, when set).
func (ps *procSet) start(logPath string, stdout io.Writer, args ...string) *exec.Cmd {
	ps.t.Helper()
	c := exec.Command(ps.bin, args...)
	if _, err := devproc.StartLogged(c, logPath, stdout); err != nil {
		ps.t.Fatal(err)
	}
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
	return ps.start(filepath.Join(n.Home, "node.log"), nil, devproc.RestartArgs(n)...).Process.Pid
}

// waitDead waits until pid has exited (a killed child is reaped by the
// goroutine waiting on it), so a restart never races its predecessor for
// the home's locks and ports.
func waitDead(t *testing.T, name string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for devproc.Alive(pid) {
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
		if devproc.Alive(c.Process.Pid) {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, c := range extra {
		for devproc.Alive(c.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if devproc.Alive(c.Process.Pid) {
			t.Errorf("%v (pid %d) did not stop within 15 s of SIGTERM", c.Args, c.Process.Pid)
			_ = c.Process.Kill()
		}
	}
	for _, msg := range ps.Stop() {
		t.Error(msg)
	}
	if t.Failed() {
		t.Logf("devnet output:\n%s", ps.Out.String())
		for _, n := range ps.M.Nodes {
			b, _ := os.ReadFile(filepath.Join(n.Home, "node.log"))
			t.Logf("%s: last lines of node.log:\n%s", n.Name, devproc.Tail(string(b), 25))
		}
	}
}

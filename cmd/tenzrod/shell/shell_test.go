package shell

import (
	"context"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chzyer/readline"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

func TestOneShotUnknownCommand(t *testing.T) {
	node := standardNode(t)
	out, err := runCmd(t, node, "frobnicate --now")
	if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) {
		t.Fatalf("err %v, want one naming the command", err)
	}
	if out != "" || len(node.calls) != 0 {
		t.Errorf("printed %q, called %+v", out, node.calls)
	}
	if _, err := runCmd(t, node, "  "); err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Errorf("blank command: %v", err)
	}
	if out, err := runCmd(t, node, "exit"); err != nil || out != "" {
		t.Errorf("exit: %q, %v", out, err)
	}
	if err := Run(t.Context(), Config{API: "ftp://x"}, "info"); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("bad API URL: %v", err)
	}
}

// interactive runs the shell's loop reading lines from in, with no terminal.
func interactive(ctx context.Context, t *testing.T, api string, in io.Reader, history string) (out, errOut *devnet.SyncBuffer, done chan error) {
	out, errOut, done = new(devnet.SyncBuffer), new(devnet.SyncBuffer), make(chan error, 1)
	s, err := newSession(Config{API: api, Out: out, Err: errOut})
	if err != nil {
		t.Fatal(err)
	}
	s.interactive = true
	rlc := &readline.Config{
		HistoryFile:        history,
		Stdin:              io.NopCloser(in),
		FuncIsTerminal:     func() bool { return false },
		FuncMakeRaw:        func() error { return nil },
		FuncExitRaw:        func() error { return nil },
		FuncGetWidth:       func() int { return 100 },
		FuncOnWidthChanged: func(func()) {},
	}
	go func() { done <- s.interact(ctx, rlc) }()
	return out, errOut, done
}

func wait(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not return")
		return nil
	}
}

func TestInteractiveSession(t *testing.T) {
	node := standardNode(t)
	history := filepath.Join(t.TempDir(), "history")
	in := strings.NewReader("info\nbogus\n\npeers --json\nexit\ntopics\n")
	out, errOut, done := interactive(t.Context(), t, node.srv.URL, in, history)
	if err := wait(t, done); err != nil {
		t.Fatalf("shell returned %v", err)
	}
	for _, want := range []string{"(software key — not hardware)", `"peer_id":"12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"node API " + node.srv.URL + "/rpc",
		"connected to provider node 12D3Ko…CVe2Xo on devnet, machine 3fa2c1d4… (software key — not hardware)",
		`error: unknown command "bogus"`,
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("messages lack %q:\n%s", want, errOut)
		}
	}
	if len(node.callsTo("tenzro_listTopics")) != 0 {
		t.Error("a command after exit ran")
	}
	h, err := os.ReadFile(history)
	if err != nil || !strings.Contains(string(h), "peers --json\n") {
		t.Errorf("history %q, %v", h, err)
	}
}

func TestInteractiveErrorsKeepTheShell(t *testing.T) {
	node := newFakeNode(t)
	_, errOut, done := interactive(t.Context(), t, node.srv.URL, strings.NewReader("info\npeers\n"), os.DevNull)
	if err := wait(t, done); err != nil {
		t.Fatalf("EOF: %v", err)
	}
	for _, want := range []string{
		"warning: tenzro_nodeInfo: rpc error -32601 (method not found)",
		"error: tenzro_nodeInfo: rpc error -32601 (method not found)",
		"error: tenzro_listPeers: rpc error -32601 (method not found)",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("messages lack %q:\n%s", want, errOut)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api := "http://" + l.Addr().String()
	l.Close()
	_, errOut, done = interactive(t.Context(), t, api, strings.NewReader("peers\n"), os.DevNull)
	if err := wait(t, done); err != nil {
		t.Fatalf("EOF: %v", err)
	}
	for _, want := range []string{
		"warning: tenzro_nodeInfo: node unreachable at " + api + "/rpc",
		"error: tenzro_listPeers: node unreachable at " + api + "/rpc",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("messages lack %q:\n%s", want, errOut)
		}
	}
}

func TestInteractiveCancelEndsShell(t *testing.T) {
	node := standardNode(t)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	defer pw.Close()
	_, _, done := interactive(ctx, t, node.srv.URL, pr, os.DevNull)
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := wait(t, done); err != nil {
		t.Errorf("cancel: %v", err)
	}
}

// TestInterruptStopsTailOnly sends a real SIGINT while tail long-polls: the
// tail stops, the shell stays, even though the caller's own context is one
// that os/signal cancels on that interrupt.
func TestInterruptStopsTailOnly(t *testing.T) {
	node := standardNode(t)
	g := newGossipLog(t, node, 100)
	g.events = nil
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt)
	defer stop()
	pr, pw := io.Pipe()
	defer pw.Close()
	out, errOut, done := interactive(ctx, t, node.srv.URL, pr, os.DevNull)
	go io.WriteString(pw, "tail heartbeat\n")
	select {
	case <-g.polling:
	case <-time.After(10 * time.Second):
		t.Fatal("tail never polled")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errOut.String(), "(interrupted)") {
		if time.Now().After(deadline) {
			t.Fatalf("tail not interrupted:\n%s", errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ctx.Err() == nil {
		t.Fatal("the caller's context saw no interrupt")
	}
	go io.WriteString(pw, "topics\nexit\n")
	if err := wait(t, done); err != nil {
		t.Fatalf("shell: %v", err)
	}
	if !strings.Contains(out.String(), "/tenzro/devnet/heartbeat/1") {
		t.Errorf("shell did not go on after the interrupt:\n%s", out)
	}
	if !strings.Contains(errOut.String(), "tailing heartbeat after #7 (Ctrl-C stops)") {
		t.Errorf("messages:\n%s", errOut)
	}
}

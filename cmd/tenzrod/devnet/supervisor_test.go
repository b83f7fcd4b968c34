package devnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopAllNamesEveryNode: the devnet's stop says, for each node it
// supervises, that it stopped; a node still running after the grace is
// named as it is SIGKILLed; and a node of the devnet's dir started by hand
// (which the devnet does not stop) is named with its pid.
func TestStopAllNamesEveryNode(t *testing.T) {
	dir := t.TempDir()
	out := &SyncBuffer{}
	s := newSupervisor(out)
	start := func(name, script string) {
		t.Helper()
		home := filepath.Join(dir, name)
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := s.start("/bin/sh", nodePlan{entry: NodeEntry{Name: name, Home: home}, args: []string{"-c", script}}); err != nil {
			t.Fatal(err)
		}
	}
	start("validator-0", "exec sleep 60")
	start("provider-0", "trap '' TERM; sleep 5; :") // ignores SIGTERM: the grace runs out
	// A provider restarted by hand, as the README does it: not a child.
	hand := exec.Command("/bin/sh", "-c", "sleep 60; :", "sh", "--home", "provider-1")
	hand.Dir = dir
	if err := hand.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hand.Process.Kill(); _ = hand.Wait() })
	time.Sleep(200 * time.Millisecond) // the shells set their traps

	began := time.Now()
	s.stopAll(500 * time.Millisecond)
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("stopAll took %s with a 500ms grace", took)
	}
	s.reportHandStarted(dir)
	got := out.String()
	for _, want := range []string{
		`devnet: stopping 2 nodes \(SIGTERM\): provider-0, validator-0`,
		`devnet: stopped validator-0 \(pid \d+\): signal: terminated`,
		`devnet: provider-0 \(pid \d+\) did not stop within 500ms of SIGTERM: killing it \(SIGKILL\)`,
		`devnet: stopped provider-0 \(pid \d+\): signal: killed`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("stop output lacks %q:\n%s", want, got)
		}
	}
	if runtime.GOOS == "linux" {
		want := "still running, started by hand and not by this devnet: provider-1 (pid " + strconv.Itoa(hand.Process.Pid) + ")"
		if !strings.Contains(got, want) {
			t.Errorf("stop output does not name the node started by hand (%q):\n%s", want, got)
		}
	}
	for _, name := range []string{"validator-0", "provider-0"} {
		if pid := s.pid(name); syscall.Kill(pid, 0) == nil {
			t.Errorf("%s (pid %d) still runs after stopAll", name, pid)
		}
	}
	s.stopAll(time.Second) // a second stop does nothing, says nothing
	if strings.Count(out.String(), "stopping 2 nodes") != 1 {
		t.Errorf("a second stopAll spoke again:\n%s", out.String())
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// soak builds tenzrod and this command (with the chaosbroken tag when the
// test is built with it) and runs a short fixed-seed soak on real
// processes: 4 validators, 2 providers, 2 gateways and the join gateway,
// one round of every fault kind (150 s bound only reached when a fault is
// not recovered from within its 60 s). It returns the output and exit code.
func soak(t *testing.T) (string, int) {
	t.Helper()
	// The work directory (history.json, every node's log) stays when the
	// test fails.
	dir, err := os.MkdirTemp("", "chaos-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("work directory kept: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	start := time.Now()
	tenzrod, err := buildBinary("../..", dir)
	if err != nil {
		t.Fatal(err)
	}
	chaos := filepath.Join(dir, "chaos")
	args := []string{"build", "-o", chaos}
	if brokenBuild {
		args = append(args, "-tags", "chaosbroken")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/chaos: %v\n%s", err, out)
	}
	t.Logf("built in %s", time.Since(start).Round(time.Millisecond))
	var out bytes.Buffer
	c := exec.Command(chaos, "--duration", "150s", "--rounds", "1", "--seed", "7", "--rate", "2",
		"--providers", "2", "--gateways", "2", "--settle", "90s", "--bin", tenzrod, "--dir", filepath.Join(dir, "run"))
	c.Stdout, c.Stderr = &out, &out
	err = c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("soak ran %s, exit %d:\n%s", time.Since(start).Round(time.Millisecond), code, out.String())
	return out.String(), code
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// onlyKnown reports whether every violation the run listed is one of the
// known bugs: a split-character continuation, or a restarted provider a
// gateway cannot dial.
func onlyKnown(out string) bool {
	_, list, ok := strings.Cut(out, "\nviolations:\n")
	if !ok {
		return false
	}
	n := 0
	for _, l := range strings.Split(list, "\n") {
		v, ok := strings.CutPrefix(l, "  - ")
		if !ok {
			break
		}
		n++
		if !strings.Contains(v, "): "+splitContinuation+": complete answer differs") && !strings.Contains(v, ": chaos: "+unreachableProvider+": not recovered") {
			return false
		}
	}
	return n > 0
}

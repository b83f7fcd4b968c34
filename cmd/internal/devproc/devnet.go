package devproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// Build compiles the package pkg of the module at dir into outDir and
// returns the binary's path; tags, if any, are build tags.
func Build(dir, pkg, outDir string, tags ...string) (string, error) {
	bin := filepath.Join(outDir, "tenzrod")
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	c := exec.Command("go", append(args, pkg)...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("devproc: go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Devnet is a running `tenzrod devnet` and the manifest it wrote.
type Devnet struct {
	Cmd    *exec.Cmd
	Out    *devnet.SyncBuffer // its stdout and stderr
	M      devnet.Manifest
	exited chan struct{}
}

// Command is `bin devnet` in dir with the given counts of nodes; extra are
// further flags.
func Command(bin, dir string, validators, providers, gateways int, extra ...string) *exec.Cmd {
	return exec.Command(bin, append([]string{"devnet", "--dir", dir, "--validators", strconv.Itoa(validators),
		"--providers", strconv.Itoa(providers), "--gateways", strconv.Itoa(gateways)}, extra...)...)
}

// StartDevnet starts c (see Command) and waits until the manifest in dir
// reads, the devnet exits or ctx ends. The Devnet it returns, even with an
// error, is to be stopped.
func StartDevnet(ctx context.Context, c *exec.Cmd, dir string) (*Devnet, error) {
	d := &Devnet{Cmd: c, Out: &devnet.SyncBuffer{}, exited: make(chan struct{})}
	c.Stdout, c.Stderr = d.Out, d.Out
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("devproc: start devnet: %w", err)
	}
	go func() { _ = c.Wait(); close(d.exited) }()
	for {
		m, err := ReadManifest(dir)
		if err == nil {
			d.M = m
			return d, nil
		}
		select {
		case <-d.exited:
			return d, fmt.Errorf("devproc: the devnet exited before writing its manifest:\n%s", Tail(d.Out.String(), 20))
		case <-ctx.Done():
			return d, fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ReadManifest reads the manifest of the devnet in dir.
func ReadManifest(dir string) (devnet.Manifest, error) {
	var m devnet.Manifest
	path := filepath.Join(dir, devnet.ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("devproc: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("devproc: %s: %w", path, err)
	}
	return m, nil
}

// Stop ends the devnet with SIGINT (SIGKILL after 30 s), which stops its
// own children, then SIGKILLs any node of the manifest still running. It
// returns what did not stop on its own, which a test counts as a failure.
func (d *Devnet) Stop() []string {
	if d == nil {
		return nil
	}
	var left []string
	_ = d.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		_ = d.Cmd.Process.Kill()
		left = append(left, "devnet did not stop within 30 s")
	}
	for _, n := range d.M.Nodes {
		if Alive(n.PID) {
			left = append(left, fmt.Sprintf("%s (pid %d) still running after the devnet stopped", n.Name, n.PID))
			_ = syscall.Kill(n.PID, syscall.SIGKILL)
		}
	}
	return left
}

// RestartArgs are the arguments that start node n again from its home.
func RestartArgs(n devnet.NodeEntry) []string {
	cmd := n.Role
	if n.Role == "gateway" {
		cmd = "join" // the devnet runs its gateways as `tenzrod join --home`
	}
	return []string{cmd, "--home", n.Home}
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

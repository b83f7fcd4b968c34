package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// cluster is the devnet under test plus the join gateway.
type cluster struct {
	bin   string
	dir   string
	dn    *exec.Cmd
	dnOut *devnet.SyncBuffer
	m     devnet.Manifest

	validators, providers, gateways []*proc
	join                            *proc
	joinToken                       string
}

// buildBinary builds tenzrod from the module at repo into dir.
func buildBinary(repo, dir string) (string, error) {
	bin := filepath.Join(dir, "tenzrod")
	args := []string{"build", "-o", bin}
	if brokenBuild {
		// The deliberately broken node (consensus/settle/broken_on.go).
		args = append(args, "-tags", "chaosbroken")
	}
	c := exec.Command("go", append(args, "./cmd/tenzrod")...)
	c.Dir = repo
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chaos: go build ./cmd/tenzrod: %w\n%s", err, out)
	}
	return bin, nil
}

// startCluster runs `tenzrod devnet` in dir and waits for its manifest,
// then starts the join gateway with the buyer's key and a deposit.
func startCluster(ctx context.Context, cfg config, bin, dir string) (*cluster, error) {
	cl := &cluster{bin: bin, dir: dir, dnOut: &devnet.SyncBuffer{}}
	cl.dn = exec.Command(bin, "devnet", "--dir", dir, "--fresh",
		"--validators", strconv.Itoa(cfg.validators), "--providers", strconv.Itoa(cfg.providers),
		"--gateways", strconv.Itoa(cfg.gateways))
	cl.dn.Stdout, cl.dn.Stderr = cl.dnOut, cl.dnOut
	cl.dn.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cl.dn.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start devnet: %w", err)
	}
	manifest := filepath.Join(dir, devnet.ManifestFile)
	exited := make(chan struct{})
	go func() { _ = cl.dn.Wait(); close(exited) }()
	for {
		if b, err := os.ReadFile(manifest); err == nil && json.Unmarshal(b, &cl.m) == nil {
			break
		}
		select {
		case <-exited:
			return cl, fmt.Errorf("chaos: the devnet exited before writing its manifest:\n%s", tail(cl.dnOut.String(), 20))
		case <-ctx.Done():
			return cl, fmt.Errorf("chaos: no devnet manifest: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, n := range cl.m.Nodes {
		cmd := n.Role
		if n.Role == "gateway" {
			cmd = "join" // the devnet runs its gateways as `tenzrod join --home`
		}
		p := &proc{name: n.Name, role: n.Role, home: n.Home, api: n.API, pid: n.PID, args: []string{cmd, "--home", n.Home}}
		switch n.Role {
		case "validator":
			cl.validators = append(cl.validators, p)
		case "provider":
			cl.providers = append(cl.providers, p)
		case "gateway":
			cl.gateways = append(cl.gateways, p)
		}
	}
	if len(cl.validators) < 1 || len(cl.providers) < 2 || len(cl.gateways) < 1 {
		return cl, fmt.Errorf("chaos: the manifest lists %d validators, %d providers, %d gateways", len(cl.validators), len(cl.providers), len(cl.gateways))
	}
	return cl, cl.startJoin(ctx)
}

// startJoin runs `tenzrod join` as a laptop would: the buyer's own key as
// settler, a deposit into its own escrow, a fixed API port so a restart
// keeps its address.
func (cl *cluster) startJoin(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	home := filepath.Join(cl.dir, "laptop")
	p := &proc{name: "join", role: "gateway", home: home, api: "http://" + listen,
		args: []string{"join", "--home", home, "--api-listen", listen}}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	first := []string{"join", "--home", home, "--api-listen", listen, "--bootstrap", cl.m.Nodes[0].P2P[0],
		"--genesis", cl.m.Genesis, "--account-key", cl.m.BuyerKey, "--deposit", strconv.Itoa(joinDeposit)}
	for _, cp := range cl.m.ChainPeers[:min(2, len(cl.m.ChainPeers))] {
		first = append(first, "--chain-peer", cp)
	}
	out := &devnet.SyncBuffer{}
	c := exec.Command(cl.bin, first...)
	logf, err := os.OpenFile(filepath.Join(cl.dir, "join.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c.Stdout, c.Stderr = io.MultiWriter(out, logf), logf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		return errors.Join(fmt.Errorf("chaos: start join: %w", err), logf.Close())
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); logf.Close(); close(done) }() //nolint:errcheck // the child wrote through its own descriptor; ours buffers nothing
	p.pid, p.cmd, p.done = c.Process.Pid, c, done
	cl.join = p
	deadline := time.Now().Add(120 * time.Second)
	for {
		s := out.String()
		if i := strings.Index(s, "sk-tenzro-"); i >= 0 && strings.Contains(s, "OpenAI API") {
			cl.joinToken = strings.Fields(s[i:])[0]
			// Later starts read the home it wrote, not the first run's flags,
			// and log to the home like every other node.
			p.home = filepath.Join(cl.dir, "laptop")
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("chaos: join exited early:\n%s", tail(out.String(), 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: join printed no token within 120 s:\n%s", tail(out.String(), 20))
		}
	}
}

// all lists every process: validators, providers, gateways, join.
func (cl *cluster) all() []*proc {
	out := append(append(append([]*proc{}, cl.validators...), cl.providers...), cl.gateways...)
	if cl.join != nil {
		out = append(out, cl.join)
	}
	return out
}

// routers are the nodes the load goes through, with their tokens.
func (cl *cluster) routers() []*proc {
	out := append([]*proc{}, cl.gateways...)
	if cl.join != nil {
		out = append(out, cl.join)
	}
	return out
}

func (cl *cluster) token(p *proc) string {
	if p == cl.join {
		return cl.joinToken
	}
	return cl.m.BuyerToken
}

// stop ends every process the soak started, then the devnet (SIGINT),
// which stops its own children.
func (cl *cluster) stop() {
	var wg sync.WaitGroup
	for _, p := range cl.all() {
		wg.Go(func() { p.finish(15 * time.Second) })
	}
	wg.Wait()
	if cl.dn == nil || cl.dn.Process == nil {
		return
	}
	_ = cl.dn.Process.Signal(syscall.SIGINT)
	deadline := time.Now().Add(30 * time.Second)
	for alive(cl.dn.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(cl.dn.Process.Pid) {
		_ = cl.dn.Process.Kill()
	}
	for _, n := range cl.m.Nodes {
		if alive(n.PID) {
			_ = syscall.Kill(n.PID, syscall.SIGKILL)
		}
	}
}

func freePort() (int, error) {
	p, err := freeport.TCP()
	if err != nil {
		return 0, fmt.Errorf("chaos: %w", err)
	}
	return p, nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

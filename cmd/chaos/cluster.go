package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// cluster is the devnet under test plus the join gateway.
type cluster struct {
	bin string
	dir string
	dn  *devproc.Devnet
	m   devnet.Manifest

	validators, providers, gateways []*proc
	join                            *proc
	joinToken                       string
}

// buildBinary builds tenzrod from the module at repo into dir.
func buildBinary(repo, dir string) (string, error) {
	var tags []string
	if brokenBuild {
		// The deliberately broken node (consensus/settle/broken_on.go).
		tags = append(tags, "chaosbroken")
	}
	bin, err := devproc.Build(repo, "./cmd/tenzrod", dir, tags...)
	if err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	return bin, nil
}

// startCluster runs `tenzrod devnet` in dir and waits for its manifest,
// then starts the join gateway with the buyer's key and a deposit.
func startCluster(ctx context.Context, cfg config, bin, dir string) (*cluster, error) {
	cl := &cluster{bin: bin, dir: dir}
	c := devproc.Command(bin, dir, cfg.validators, cfg.providers, cfg.gateways, "--fresh")
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	dn, err := devproc.StartDevnet(ctx, c, dir)
	cl.dn = dn
	if err != nil {
		return cl, fmt.Errorf("chaos: %w", err)
	}
	cl.m = dn.M
	for _, n := range cl.m.Nodes {
		p := &proc{name: n.Name, role: n.Role, home: n.Home, api: n.API, pid: n.PID, args: devproc.RestartArgs(n)}
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
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done, err := devproc.StartLogged(c, filepath.Join(cl.dir, "join.log"), out)
	if err != nil {
		return fmt.Errorf("chaos: join: %w", err)
	}
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
			return fmt.Errorf("chaos: join exited early:\n%s", devproc.Tail(out.String(), 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: join printed no token within 120 s:\n%s", devproc.Tail(out.String(), 20))
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
	cl.dn.Stop()
}

func freePort() (int, error) {
	p, err := freeport.TCP()
	if err != nil {
		return 0, fmt.Errorf("chaos: %w", err)
	}
	return p, nil
}

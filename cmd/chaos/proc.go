package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
)

// proc is one tenzrod process the soak controls: a devnet child it found
// in devnet.json (pid only) or a process it started itself (cmd set).
type proc struct {
	name, role, home, api string
	args                  []string // how to start it again

	mu      sync.Mutex
	pid     int
	cmd     *exec.Cmd
	done    <-chan struct{} // closed when cmd exits; nil for a devnet child
	stopped bool            // SIGSTOPped
	down    bool            // killed and not restarted
}

// live reports whether the process runs (a stopped one counts).
func (p *proc) live() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	return devproc.Alive(p.pid)
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	pid := p.pid
	switch sig {
	case syscall.SIGSTOP:
		p.stopped = true
	case syscall.SIGCONT:
		p.stopped = false
	}
	p.mu.Unlock()
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("chaos: %s to %s (pid %d): %w", sig, p.name, pid, err)
	}
	return nil
}

// kill sends sig (SIGKILL or SIGTERM) and waits for the process to exit,
// so a restart never races its predecessor for the home's locks and ports.
func (p *proc) kill(sig syscall.Signal, limit time.Duration) error {
	if err := p.signal(sig); err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for p.live() {
		if time.Now().After(deadline) {
			if sig == syscall.SIGKILL {
				return fmt.Errorf("chaos: %s still alive %s after %s", p.name, limit, sig)
			}
			return p.kill(syscall.SIGKILL, 10*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	return nil
}

// start runs the process again from its home, output appended to its log.
func (p *proc) start(bin string) error {
	c := exec.Command(bin, p.args...)
	// The node dies with the soak, whatever ends it.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done, err := devproc.StartLogged(c, filepath.Join(p.home, "node.log"), nil)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", p.name, err)
	}
	p.mu.Lock()
	p.pid, p.cmd, p.done, p.down, p.stopped = c.Process.Pid, c, done, false, false
	p.mu.Unlock()
	return nil
}

// finish stops a process the soak started (SIGCONT first, then SIGTERM,
// SIGKILL after grace); devnet children are left to the devnet.
func (p *proc) finish(grace time.Duration) {
	p.mu.Lock()
	own, stopped := p.cmd != nil, p.stopped
	p.mu.Unlock()
	if stopped {
		_ = p.signal(syscall.SIGCONT)
	}
	if own && p.live() {
		_ = p.kill(syscall.SIGTERM, grace)
	}
}

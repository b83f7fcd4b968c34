package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one tenzrod process the soak controls: a devnet child it found
// in devnet.json (pid only) or a process it started itself (cmd set).
type proc struct {
	name, role, home, api string
	args                  []string // how to start it again

	mu      sync.Mutex
	pid     int
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd exits; nil for a devnet child
	stopped bool          // SIGSTOPped
	down    bool          // killed and not restarted
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

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
	return alive(p.pid)
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
	logf, err := os.OpenFile(p.home+"/node.log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c := exec.Command(bin, p.args...)
	c.Stdout, c.Stderr = logf, logf
	// The node dies with the soak, whatever ends it.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		return errors.Join(fmt.Errorf("chaos: start %s: %w", p.name, err), logf.Close())
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); logf.Close(); close(done) }() //nolint:errcheck // the child wrote through its own descriptor; ours buffers nothing
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

package devproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Alive reports whether pid names a process (a zombie not yet reaped
// counts).
func Alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// StartLogged starts c with its output appended to logPath, and its
// stdout also to stdout when set. The channel it returns closes once c
// has exited and been reaped, so that a restart never races its
// predecessor for a home's locks and ports.
func StartLogged(c *exec.Cmd, logPath string, stdout io.Writer) (<-chan struct{}, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("devproc: %w", err)
	}
	c.Stdout, c.Stderr = logf, logf
	if stdout != nil {
		c.Stdout = io.MultiWriter(stdout, logf)
	}
	if err := c.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("devproc: start %v: %w", c.Args, err), logf.Close())
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); logf.Close(); close(done) }() //nolint:errcheck // the child wrote through its own descriptor; ours buffers nothing
	return done, nil
}

// WaitUntil polls cond every poll until it holds or limit has passed; it
// returns how long that took and whether cond held.
func WaitUntil(limit, poll time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		time.Sleep(poll)
	}
	return time.Since(start), true
}

package devnet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// supervisor owns the child processes.
type supervisor struct {
	out io.Writer

	mu    sync.Mutex
	procs map[string]*child
	order []string
}

type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

func newSupervisor(out io.Writer) *supervisor {
	return &supervisor{out: out, procs: make(map[string]*child)}
}

func (s *supervisor) start(bin string, p nodePlan) error {
	logf, err := os.OpenFile(p.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	cmd := exec.Command(bin, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("devnet: start %s: %w", p.entry.Name, err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), log: logf}
	s.mu.Lock()
	s.procs[p.entry.Name] = c
	s.order = append(s.order, p.entry.Name)
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		close(c.done)
		logf.Close()
		fmt.Fprintf(s.out, "devnet: %s (pid %d) exited: %v\n", p.entry.Name, cmd.Process.Pid, exitText(err))
	}()
	return nil
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func (s *supervisor) pid(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.procs[name]; ok {
		return c.cmd.Process.Pid
	}
	return 0
}

func (s *supervisor) exited(name string) bool {
	s.mu.Lock()
	c, ok := s.procs[name]
	s.mu.Unlock()
	if !ok {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stopAll sends SIGTERM to every child, waits up to grace for them to
// exit, then kills the rest. Children are stopped in reverse start order
// so gateways and providers leave before the validators they bootstrap off.
func (s *supervisor) stopAll(grace time.Duration) {
	s.mu.Lock()
	var live []*child
	for i := len(s.order) - 1; i >= 0; i-- {
		live = append(live, s.procs[s.order[i]])
	}
	s.mu.Unlock()
	for _, c := range live {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(grace)
	for _, c := range live {
		select {
		case <-c.done:
		case <-deadline:
			for _, k := range live {
				_ = k.cmd.Process.Kill()
			}
			for _, k := range live {
				<-k.done
			}
			return
		}
	}
}

// waitHealthy polls the node's /healthz until it answers 200.
func waitHealthy(ctx context.Context, api string, s *supervisor, name string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if s.exited(name) {
			return fmt.Errorf("process exited")
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

package devnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// supervisor owns the child processes.
type supervisor struct {
	out io.Writer

	mu       sync.Mutex
	procs    map[string]*child
	order    []string
	stopping bool // set by stopAll: an exit from then on is a stop, not a crash
	outMu    sync.Mutex
}

// say writes one line to out; children exit concurrently.
func (s *supervisor) say(format string, args ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, format+"\n", args...)
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
		return errors.Join(fmt.Errorf("devnet: start %s: %w", p.entry.Name, err), logf.Close())
	}
	c := &child{cmd: cmd, done: make(chan struct{}), log: logf}
	s.mu.Lock()
	if s.stopping {
		// The devnet is going down: a node started now would outlive it.
		s.mu.Unlock()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return errors.Join(fmt.Errorf("devnet: not starting %s: the devnet is stopping", p.entry.Name), logf.Close())
	}
	s.procs[p.entry.Name] = c
	s.order = append(s.order, p.entry.Name)
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close() //nolint:errcheck // the child wrote through its own descriptor; ours buffers nothing
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		// Said before done closes, so stopAll returns after every line.
		if stopping {
			s.say("devnet: stopped %s (pid %d): %v", p.entry.Name, cmd.Process.Pid, exitText(err))
		} else {
			s.say("devnet: %s (pid %d) exited: %v", p.entry.Name, cmd.Process.Pid, exitText(err))
		}
		close(c.done)
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
// exit, then kills the rest, naming each: a node that ignores SIGTERM is
// a bug to see, not to hide. Children are stopped in reverse start order
// so gateways and providers leave before the validators they bootstrap
// off. Each child says it stopped (start's wait line); stopAll returns
// once all have, and a second call does nothing.
func (s *supervisor) stopAll(grace time.Duration) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	s.stopping = true
	type named struct {
		name string
		c    *child
	}
	var live []named
	for i := len(s.order) - 1; i >= 0; i-- {
		c := s.procs[s.order[i]]
		select {
		case <-c.done:
		default:
			live = append(live, named{s.order[i], c})
		}
	}
	s.mu.Unlock()
	if len(live) == 0 {
		return
	}
	names := make([]string, len(live))
	for i, n := range live {
		names[i] = n.name
		_ = n.c.cmd.Process.Signal(syscall.SIGTERM)
	}
	s.say("devnet: stopping %d nodes (SIGTERM): %s", len(live), strings.Join(names, ", "))
	deadline := time.After(grace)
	for i, n := range live {
		select {
		case <-n.c.done:
			continue
		case <-deadline:
		}
		for _, k := range live[i:] {
			select {
			case <-k.c.done:
			default:
				s.say("devnet: %s (pid %d) did not stop within %s of SIGTERM: killing it (SIGKILL)", k.name, k.c.cmd.Process.Pid, grace)
				_ = k.c.cmd.Process.Kill()
			}
		}
		for _, k := range live[i:] {
			<-k.c.done
		}
		return
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

// handNode is a node of the devnet's dir running outside the supervisor.
type handNode struct {
	name string
	pid  int
}

// reportHandStarted names, after the stop, the nodes of dir still running
// that were started by hand: the devnet does not own them, so it leaves
// them be, but Ctrl-C must not look as if it stopped everything.
func (s *supervisor) reportHandStarted(dir string) {
	hand := handStarted(dir)
	if len(hand) == 0 {
		s.say("devnet: every node it started has stopped; none of its homes has a node left running")
		return
	}
	var names, pids []string
	for _, h := range hand {
		names = append(names, fmt.Sprintf("%s (pid %d)", h.name, h.pid))
		pids = append(pids, strconv.Itoa(h.pid))
	}
	s.say("devnet: still running, started by hand and not by this devnet: %s; stop them with: kill %s",
		strings.Join(names, ", "), strings.Join(pids, " "))
}

package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
)

// Config configures a shell.
type Config struct {
	// API is the node's HTTP API base URL, e.g. "http://127.0.0.1:8080";
	// the shell POSTs JSON-RPC 2.0 to API + "/rpc".
	API string
	// Token, if set, is sent as `Authorization: Bearer TOKEN` with every
	// call: methods reading a buyer's own (tenzro_getSession) need it.
	Token string
	// HistoryFile is where the interactive shell keeps its history;
	// "" means ~/.tenzrod_history, os.DevNull keeps none.
	HistoryFile string
	// Out receives command output (default os.Stdout), Err messages and,
	// in interactive mode, errors (default os.Stderr).
	Out io.Writer
	Err io.Writer
	// Actions are commands that sign transactions with a key the user
	// names: the shell holds no key and signs nothing itself, so the
	// program embedding it runs them (tenzrod gives `dispute open`).
	Actions []Action
}

// Action is a command the shell hands whole to its embedder: Run gets the
// words after the command's name, the node's API base URL and the
// shell's output, and parses its own flags.
type Action struct {
	Name, Args, Summary, Detail string
	Run                         func(ctx context.Context, api string, args []string, out io.Writer) error
}

// Run runs the shell against the node at cfg.API. With command == "" it is
// interactive and returns nil when the user leaves (exit, quit, Ctrl-D) or ctx
// ends for any reason but an interrupt: Ctrl-C stops the running command and
// returns to the prompt. Otherwise it runs that one command, prints its output
// to cfg.Out and returns its error unprinted, for the caller to print and exit
// non-zero.
func Run(ctx context.Context, cfg Config, command string) error {
	s, err := newSession(cfg)
	if err != nil {
		return err
	}
	if command != "" {
		return s.runOnce(ctx, command)
	}
	s.interactive = true
	return s.interact(ctx, &readline.Config{HistoryFile: historyPath(cfg.HistoryFile)})
}

type session struct {
	client      *Client
	reg         *registry
	out, errOut io.Writer
	interactive bool
}

func newSession(cfg Config) (*session, error) {
	client, err := NewClient(cfg.API)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	client.SetToken(cfg.Token)
	s := &session{client: client, reg: commandTable(), out: cfg.Out, errOut: cfg.Err}
	for _, a := range cfg.Actions {
		s.reg.add(a, cfg.API)
	}
	if s.out == nil {
		s.out = os.Stdout
	}
	if s.errOut == nil {
		s.errOut = os.Stderr
	}
	return s, nil
}

func historyPath(p string) string {
	if p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".tenzrod_history")
}

// exec parses and runs one command line.
func (s *session) exec(ctx context.Context, line string) error {
	inv, err := s.reg.parse(line)
	if err != nil || inv == nil {
		return err
	}
	run := inv.cmd.run
	if run == nil {
		run = runMethod
	}
	return run(ctx, s, inv)
}

func (s *session) runOnce(ctx context.Context, line string) error {
	if strings.TrimSpace(line) == "" {
		return errors.New("empty command (type \"help\" for the list of commands)")
	}
	if err := s.exec(ctx, line); err != nil && !errors.Is(err, errExit) {
		return err
	}
	return nil
}

// interact is the read-eval-print loop. It runs on a context of its own so
// that an interrupt which also cancelled ctx (a caller's signal.NotifyContext)
// stops only the running command; any other end of ctx ends the loop.
func (s *session) interact(ctx context.Context, rlc *readline.Config) error {
	rlc.Prompt = "tenzrod> "
	rlc.AutoComplete = newCompleter(s)
	rlc.Stdout, rlc.Stderr = s.out, s.errOut
	var in io.Reader = os.Stdin
	if rlc.Stdin != nil {
		in = rlc.Stdin
	}
	// Closing this reader is what ends a pending read of the line editor;
	// readline's own Close does not reach the underlying stdin.
	stdin := readline.NewCancelableStdin(in)
	rlc.Stdin = stdin
	rl, err := readline.NewEx(rlc)
	if err != nil {
		return fmt.Errorf("shell: start line editor: %w", err)
	}
	defer func() {
		stdin.Close() //nolint:errcheck // it only ends a read; the session is over
		rl.Close()    //nolint:errcheck // it only ends a read; the session is over
	}()

	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if !isInterrupt(context.Cause(ctx)) {
			cancel()
			stdin.Close() //nolint:errcheck // it only wakes the pending read
		}
	})
	defer stop()

	s.greet(base)
	for base.Err() == nil {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case errors.Is(err, io.EOF) || base.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("shell: read command: %w", err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		cmdCtx, stopSignals := signal.NotifyContext(base, os.Interrupt)
		err = s.exec(cmdCtx, line)
		interrupted := cmdCtx.Err() != nil && base.Err() == nil
		stopSignals()
		switch {
		case errors.Is(err, errExit):
			return nil
		case err == nil:
		case interrupted && errors.Is(err, context.Canceled):
			fmt.Fprintln(s.errOut, "(interrupted)")
		default:
			fmt.Fprintf(s.errOut, "error: %v\n", err)
		}
	}
	return nil
}

// isInterrupt reports whether cause is the one os/signal.NotifyContext gives
// for os.Interrupt.
func isInterrupt(cause error) bool {
	return cause != nil && cause.Error() == os.Interrupt.String()+" signal received"
}

// greet says which node the shell talks to, or why it cannot reach it.
func (s *session) greet(ctx context.Context) {
	fmt.Fprintf(s.errOut, "tenzrod shell — node API %s — \"help\" lists commands, Ctrl-D leaves\n", s.client.Endpoint())
	var n nodeInfo
	raw, err := s.client.Call(ctx, "tenzro_nodeInfo", nil)
	if err == nil {
		err = decodeResult(raw, &n)
	}
	if err != nil {
		fmt.Fprintf(s.errOut, "warning: %v\n", err)
		return
	}
	fmt.Fprintf(s.errOut, "connected to %s node %s on %s, machine %s (%s)\n",
		orDash(n.Role), shortID(n.PeerID), orDash(n.Network), shortHex(n.MachineID), backendLabel(n.KeyBackend))
}

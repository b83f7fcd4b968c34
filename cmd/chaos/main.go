package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config is one soak run.
type config struct {
	duration   time.Duration // of the load and the fault schedule
	seed       int64
	rate       float64 // offered calls/s
	validators int
	providers  int
	gateways   int
	rounds     int           // stop after this many rounds of every fault kind (0: until duration)
	settle     time.Duration // bound on the wait for settlement to quiesce
	dir        string        // work directory ("" = a fresh temporary one)
	repo       string        // module root tenzrod is built from
	bin        string        // a tenzrod binary to use instead of building one
}

func (c config) validate() error {
	var errs []error
	if c.duration < 10*time.Second {
		errs = append(errs, fmt.Errorf("--duration %s: at least 10s", c.duration))
	}
	if c.rate <= 0 || c.rate > 50 {
		errs = append(errs, fmt.Errorf("--rate %v outside (0, 50] calls/s", c.rate))
	}
	if c.validators != 4 {
		// One of four may be down; three stop at the first kill, five or
		// more could take two kills the schedule never makes.
		errs = append(errs, fmt.Errorf("--validators %d: the schedule kills one validator at a time, which needs exactly 4", c.validators))
	}
	if c.providers < 2 || c.providers > 16 {
		errs = append(errs, fmt.Errorf("--providers %d outside 2..16 (a killed provider's streams continue on another)", c.providers))
	}
	if c.gateways < 1 || c.gateways > 4 {
		errs = append(errs, fmt.Errorf("--gateways %d outside 1..4", c.gateways))
	}
	if c.rounds < 0 {
		errs = append(errs, fmt.Errorf("--rounds %d is negative", c.rounds))
	}
	if c.settle < 10*time.Second {
		errs = append(errs, fmt.Errorf("--settle %s: at least 10s (a gateway submits undelivered records after 60s)", c.settle))
	}
	return errors.Join(errs...)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: chaos [flags]\n\nSoak a devnet under load while its nodes are killed, stalled, restarted and flooded\n"+
			"on a seeded schedule, then check every invariant; the last line is the verdict.\n\n")
		fs.PrintDefaults()
	}
	var c config
	fs.DurationVar(&c.duration, "duration", 120*time.Second, "how long the load and the faults run (a Go duration)")
	fs.Int64Var(&c.seed, "seed", 7, "seed of the fault schedule and of every call's sampling")
	fs.Float64Var(&c.rate, "rate", 4, "offered load in calls/s, split over the gateways and the join gateway")
	fs.IntVar(&c.validators, "validators", 4, "validators (exactly 4: one may be down)")
	fs.IntVar(&c.providers, "providers", 4, "providers")
	fs.IntVar(&c.gateways, "gateways", 2, "devnet gateways (the join gateway comes on top)")
	fs.IntVar(&c.rounds, "rounds", 0, "stop after this many rounds of every fault kind (0: run for --duration)")
	fs.DurationVar(&c.settle, "settle", 150*time.Second, "how long to wait for settlement to quiesce")
	fs.StringVar(&c.dir, "dir", "", "work directory, kept afterwards (default: a temporary one, removed on PASS)")
	fs.StringVar(&c.repo, "repo", ".", "module root to build tenzrod from")
	fs.StringVar(&c.bin, "bin", "", "a tenzrod binary to run instead of building one")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("chaos: unexpected arguments %q", fs.Args())
	}
	return c, c.validate()
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Printf("chaos: ERROR: %v\n", err)
		os.Exit(2)
	}
	fmt.Println(res.verdict(cfg))
	if len(res.violations) > 0 {
		os.Exit(1)
	}
}

// Command bench-scale runs the scale harness (node/nodetest/scale) for a
// list of network sizes and prints, per size, what each gateway and
// validator pays to keep up with the providers; it can write the figures
// as JSON and plot them to a PNG. scripts/bench-scale wraps it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest/scale"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := scale.Defaults(0)
	sizes := fs.String("providers", "10,100,1000", "comma list of provider counts, one network per size")
	fs.IntVar(&def.Gateways, "gateways", def.Gateways, "gateways (validate every topic, hold a provider table)")
	fs.IntVar(&def.Validators, "validators", def.Validators, "validators (as gateways, and publish price observations)")
	fs.IntVar(&def.Links, "links", def.Links, "gateways/validators each provider connects to")
	fs.IntVar(&def.Models, "models", def.Models, "catalog models besides the popular one every provider serves")
	fs.DurationVar(&def.Measure, "measure", def.Measure, "steady-state window of the rates")
	fs.DurationVar(&def.AnnounceInterval, "announce-interval", def.AnnounceInterval, "providers' re-announcement period")
	fs.DurationVar(&def.ProbeInterval, "probe-interval", def.ProbeInterval, "each validator probes each provider this often (one observation each)")
	fs.DurationVar(&def.Converge, "converge", def.Converge, "bound on the wait for every node to see every provider up")
	fs.IntVar(&def.DHTPeers, "dht-peers", def.DHTPeers, "providers that also run a DHT server (0: no DHT lookup)")
	fs.IntVar(&def.Publishers, "publishers", def.Publishers, "provider hosts at most; beyond, providers share them round-robin (0: one host per provider)")
	fs.IntVar(&def.QuoteRounds, "quote-rounds", def.QuoteRounds, "requests quoted and ranked per size")
	compare := fs.Bool("compare-queues", false, "run each size first with go-libp2p-pubsub's default queue sizes, then with the gossip service's (the fix's before/after)")
	fs.BoolVar(&def.LibraryQueues, "library-queues", false, "run with go-libp2p-pubsub's default queue sizes (before the fix)")
	jsonOut := fs.String("json", "", "write the results as JSON to this file")
	pngOut := fs.String("png", "", "plot the curves to this PNG file")
	replot := fs.String("replot", "", "read results from this JSON file (as --json writes) and only print and plot them")
	quietFlag := fs.Bool("quiet", false, "no progress lines on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench-scale [flags]\n\nSimulates N providers (publishing signed heartbeats and announcements), gateways\nand validators (validating everything) on go-libp2p's mocknet and prints per size\nwhat each node pays. Flags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *replot != "" {
		b, err := os.ReadFile(*replot)
		if err != nil {
			return err
		}
		var rs []scale.Result
		if err := json.Unmarshal(b, &rs); err != nil {
			return fmt.Errorf("%s: %w", *replot, err)
		}
		scale.Print(stdout, rs)
		if *pngOut != "" {
			return plot(*pngOut, rs)
		}
		return nil
	}
	ns, err := scale.ParseSizes(*sizes)
	if err != nil {
		return err
	}
	for _, n := range ns {
		c := def
		c.Providers = n
		if err := c.Validate(); err != nil {
			return err
		}
	}
	// The identities' key files announce themselves at INFO; the figures
	// are the output.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// A thousand simulated routers make garbage fast; the collector's time
	// is the harness's, not a node's, so it runs less often (GOGC, when
	// set, still decides).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pool, err := scale.NewPool()
	if err != nil {
		return err
	}
	defer func() { _ = pool.Close() }()
	say := func(format string, a ...any) {
		if !*quietFlag {
			fmt.Fprintf(stderr, "  "+format+"\n", a...)
		}
	}
	var results []scale.Result
	var runs []scale.Config
	for _, n := range ns {
		c := def
		c.Providers = n
		if *compare {
			before := c
			before.LibraryQueues = true
			runs = append(runs, before)
		}
		runs = append(runs, c)
	}
	for _, c := range runs {
		n := c.Providers
		fmt.Fprintf(stderr, "size %d providers, %d gateways, %d validators (library queues: %v)\n", n, c.Gateways, c.Validators, c.LibraryQueues)
		start := time.Now()
		res, err := scale.Run(ctx, pool, c, say)
		if err != nil {
			return fmt.Errorf("size %d: %w", n, err)
		}
		say("size %d done in %s", n, time.Since(start).Round(time.Second))
		results = append(results, res)
	}
	scale.Print(stdout, results)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *pngOut != "" {
		if err := plot(*pngOut, results); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

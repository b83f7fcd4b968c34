package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// result is a run's outcome.
type result struct {
	violations []string
	faults     map[string]int // injected, by kind
	calls      int
	dir        string
}

func (r result) verdict(cfg config) string {
	if len(r.violations) > 0 {
		return fmt.Sprintf("chaos: FAIL: %d violations (seed %d, %s)", len(r.violations), cfg.seed, cfg.duration)
	}
	return fmt.Sprintf("chaos: PASS (seed %d, %s, 0 violations)", cfg.seed, cfg.duration)
}

// run starts the devnet, drives the load and the faults, and checks the
// history. A violation is a result; an error means the soak itself could
// not run (the devnet did not come up, the chain could not be read).
func run(ctx context.Context, cfg config, out io.Writer) (res result, err error) {
	say := func(format string, args ...any) {
		fmt.Fprintf(out, "%s chaos: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	res.faults = map[string]int{}
	dir := cfg.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "tenzrod-chaos-")
		if err != nil {
			return res, fmt.Errorf("chaos: %w", err)
		}
		dir = d
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return res, fmt.Errorf("chaos: %w", err)
	}
	res.dir = dir
	bin := cfg.bin
	if bin == "" {
		say("building tenzrod")
		if bin, err = buildBinary(cfg.repo, dir); err != nil {
			return res, err
		}
	}
	say("starting the devnet in %s: %d validators, %d providers, %d gateways, and a join gateway", dir, cfg.validators, cfg.providers, cfg.gateways)
	startCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	cl, err := startCluster(startCtx, cfg, bin, dir)
	cancel()
	keep := cfg.dir != ""
	defer func() {
		cl.stop()
		if err != nil {
			fmt.Fprintf(out, "node logs kept in %s\n", dir)
		} else if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	if err != nil {
		return res, err
	}
	c, err := prepare(cl, say)
	if err != nil {
		return res, err
	}
	h := &history{}
	ld := &loader{cl: cl, h: h, seed: cfg.seed, rate: cfg.rate}
	monkey := &chaosMonkey{cl: cl, h: h, ld: ld, rng: rand.New(rand.NewPCG(uint64(cfg.seed), 18)), peer: c.peer}
	say("load %.1f calls/s and faults for %s (seed %d)", cfg.rate, cfg.duration, cfg.seed)
	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.duration)
	loadStart := time.Now()
	monkeyDone := make(chan struct{})
	go func() {
		monkey.run(loadCtx, cfg.rounds)
		if cfg.rounds > 0 {
			stopLoad() // every kind was injected: the short run ends here
		}
		close(monkeyDone)
	}()
	sessionsDone := make(chan struct{})
	go func() {
		ld.runSessions(loadCtx)
		close(sessionsDone)
	}()
	ld.run(loadCtx)
	<-sessionsDone
	loadTime := time.Since(loadStart)
	stopLoad()
	<-monkeyDone
	calls, faults := h.snapshot()
	for _, f := range faults {
		res.faults[f.Kind]++
		say("fault %-17s %-12s recovered after %s %s", f.Kind, f.Target, f.Recovered.Round(time.Millisecond), f.Err)
		if f.Err != "" {
			c.violate("%s of %s: %s", f.Kind, f.Target, f.Err)
		}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("chaos: interrupted: %w", ctx.Err())
	}
	// One provider dies for good, so that the status check sees a dead
	// process as well as live ones.
	time.Sleep(3 * time.Second)
	gone := cl.providers[int(uint64(cfg.seed)%uint64(len(cl.providers)))]
	if err := gone.kill(syscall.SIGKILL, 10*time.Second); err != nil {
		return res, err
	}
	say("%s killed for good; %d calls recorded; waiting for settlement to quiesce (up to %s)", gone.name, len(calls), cfg.settle)
	if err := h.write(filepath.Join(dir, "history.json")); err != nil {
		return res, err
	}
	got := c.received(calls)
	end := c.quiesce(got, cfg.settle, faults)
	say("settlement quiet at height %d", end)
	ref, err := openReferee(filepath.Join(dir, "models", cl.m.Model))
	if err != nil {
		return res, err
	}
	c.ref = ref
	checked := c.checkAnswers(ctx, calls)
	say("answers: %d complete answers recomputed by the referee engine", checked)
	say("%s", c.checkSessions(calls, &ld.ends))
	if _, err := c.checkSettlement(got, faults, failedInGatewayFaults(calls, faults)); err != nil {
		return res, err
	}
	say("receipts: %d found at the router that answered", c.checkReceipts(calls))
	c.checkStatuses()
	c.checkChain()
	for _, k := range faultKinds {
		if res.faults[k] == 0 {
			say("note: no %s fault was injected (a longer --duration runs every kind)", k)
		}
	}
	report(out, cfg, loadTime, ld.offered.Load(), calls, faults)
	res.violations, res.calls = c.violations, len(calls)
	if len(c.violations) > 0 {
		fmt.Fprintf(out, "violations:\n")
		for _, v := range c.violations {
			fmt.Fprintf(out, "  - %s\n", v)
		}
		fmt.Fprintf(out, "history and node logs kept in %s\n", dir)
		keep = true
	}
	if brokenBuild {
		fmt.Fprintf(out, "(tenzrod built with -tags chaosbroken: a restarted gateway's outbox forgets the first record it signs)\n")
	}
	return res, nil
}

// failedInGatewayFaults counts the calls that failed through a gateway
// while it was being killed or restarted: each may have left a record
// signed but never delivered.
func failedInGatewayFaults(calls []*callRecord, faults []*faultRecord) int {
	n := 0
	for _, c := range calls {
		if c.ok() {
			continue
		}
		for _, f := range faults {
			if (f.Kind == faultGatewayKill || f.Kind == faultFollowerRestart) && f.Target == c.Router &&
				!c.End.Before(f.Start) && !c.Start.After(f.End) {
				n++
				break
			}
		}
	}
	return n
}

// prepare waits until the devnet serves (every provider up at every
// router, the join deposit on chain), learns the providers' identities
// and takes the ledger snapshot the money is checked against.
func prepare(cl *cluster, say func(string, ...any)) (*checker, error) {
	c := &checker{cl: cl, out: say, peer: map[*proc]string{}, machine: map[*proc]string{}, operator: map[*proc]string{}}
	for _, n := range cl.m.Nodes {
		for _, p := range cl.providers {
			if p.name == n.Name {
				c.peer[p] = n.P2P[0][strings.LastIndex(n.P2P[0], "/")+1:]
			}
		}
	}
	for _, p := range cl.providers {
		info, ok := nodeInfo(p.api)
		if !ok {
			return nil, fmt.Errorf("chaos: %s does not answer tenzro_nodeInfo", p.name)
		}
		c.machine[p] = info.MachineID
		op, err := accountOfHome(p.home)
		if err != nil {
			return nil, err
		}
		c.operator[p] = op
	}
	c.payers = []string{cl.m.BuyerChainAccount}
	for _, v := range cl.validators {
		a, err := accountOfHome(v.home)
		if err != nil {
			return nil, err
		}
		c.payers = append(c.payers, a)
	}
	api := cl.validators[0].api
	var params ledger.Params
	if err := rpcCall(api, "tenzro_getParams", nil, &params); err != nil {
		return nil, err
	}
	if params.FeePerTx != 0 {
		return nil, fmt.Errorf("chaos: fee_per_tx is %d; the money check accounts for per-record fees only", params.FeePerTx)
	}
	for _, r := range cl.routers() {
		if _, ok := waitUntil(90*time.Second, func() bool { return quotedAt(r.api, cl.m.Model) == len(cl.providers) }); !ok {
			return nil, fmt.Errorf("chaos: %s does not quote all %d providers within 90 s", r.name, len(cl.providers))
		}
	}
	if _, ok := waitUntil(30*time.Second, func() bool {
		s, err := snapshotOnce(api, c.payers[:1], nil)
		return err == nil && s.escrows[[2]string{cl.m.BuyerChainAccount, cl.m.BuyerChainAccount}] == joinDeposit
	}); !ok {
		return nil, fmt.Errorf("chaos: the join gateway's deposit of %d is not on chain within 30 s", joinDeposit)
	}
	snap, err := snapshot(api, c.payers, c.accounts())
	if err != nil {
		return nil, err
	}
	c.start = snap
	say("devnet serving; ledger snapshot at height %d: escrows Σ %d", snap.height, snap.escrowSum())
	return c, nil
}

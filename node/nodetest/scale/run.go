package scale

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
)

// Progress, when set, hears what Run is doing (the command prints it).
type Progress func(format string, args ...any)

// Run builds one market of cfg's size, lets it converge, measures it and
// tears it down. The figures of a size that did not converge are an
// error: every later figure would be of a partial network.
func Run(ctx context.Context, pool *Pool, cfg Config, say Progress) (res Result, err error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if say == nil {
		say = func(string, ...any) {}
	}
	res = Result{Providers: cfg.Providers, Gateways: cfg.Gateways, Validators: cfg.Validators, LibraryQueues: cfg.LibraryQueues}
	start := time.Now()
	mk, err := build(ctx, pool, cfg)
	if err != nil {
		return res, err
	}
	closed := false
	defer func() {
		if !closed {
			err = errors.Join(err, mk.close())
		}
	}()
	res.Setup = time.Since(start)
	res.Publishers = len(mk.pubs)
	say("built %d providers, %d gateways, %d validators in %s", cfg.Providers, cfg.Gateways, cfg.Validators, res.Setup.Round(time.Millisecond))

	start = time.Now()
	mk.start()
	// A size that does not converge is still measured (its drops and
	// flapping are the finding), but has no newcomer or DHT figures.
	if err := converge(ctx, mk.cores, mk.providers, cfg.Converge, say); err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		res.NotConverged = err.Error()
		say("%v", err)
	} else {
		res.Converge = time.Since(start)
		say("converged in %s", res.Converge.Round(time.Millisecond))
	}

	if err := measureWindow(ctx, mk, &res); err != nil {
		return res, err
	}
	say("window: %.0f heartbeats/s per node, %.1f%% of a core validating, drops %v, %d down",
		res.PerNode["heartbeat"].Validated, 100*res.PerNode["heartbeat"].ValidationCPU, res.Drops, res.Down)

	if res.NotConverged == "" {
		if err := measureNewcomer(ctx, mk, &res); err != nil {
			if ctx.Err() != nil {
				return res, err
			}
			res.NewcomerErr = err.Error()
			say("%v", err)
		} else {
			say("newcomer saw every provider in %s", res.Newcomer.Round(time.Millisecond))
		}
	}
	if cfg.DHTPeers > 0 && res.NotConverged == "" {
		measureDHT(ctx, mk, &res)
		say("dht lookup over %d servers: %s %s", res.DHTPeers, res.DHTFirst.Round(time.Millisecond), res.DHTErr)
	}
	// The rest runs on this goroutine alone, the market gone, so the heap
	// holds nothing of its traffic.
	closed = true
	if err := mk.close(); err != nil {
		return res, err
	}
	table, err := measureState(mk, &res)
	if err != nil {
		return res, err
	}
	if err := measureQuotes(table, cfg.QuoteRounds, &res); err != nil {
		return res, err
	}
	say("per heartbeat %s, quote+rank %s over %d offers", res.Heartbeat, res.QuoteMean+res.RankMean, res.Candidates)
	return res, nil
}

// converge waits until every core sees every provider up.
func converge(ctx context.Context, cores []*core, providers []*simProvider, d time.Duration, say Progress) error {
	start := time.Now()
	deadline := start.Add(d)
	next := start.Add(10 * time.Second)
	for {
		missing := 0
		for _, c := range cores {
			missing += len(providers) - c.up(providers)
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scale: not converged after %s: %d (node, provider) pairs not up", d, missing)
		}
		if time.Now().After(next) {
			say("%s: %d (node, provider) pairs not up yet", time.Since(start).Round(time.Second), missing)
			next = next.Add(10 * time.Second)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// snapshot is every core's counters at one moment.
type snapshot struct {
	at        time.Time
	cpu       time.Duration
	wire      []counts
	validated []map[gossip.Kind]uint64
	vtime     []map[gossip.Kind]time.Duration
}

func take(cores []*core) snapshot {
	s := snapshot{at: time.Now(), cpu: processCPU()}
	for _, c := range cores {
		s.wire = append(s.wire, c.wire.snapshot())
		n, t := map[gossip.Kind]uint64{}, map[gossip.Kind]time.Duration{}
		for _, ti := range c.g.Topics() {
			n[ti.Kind] = ti.Accepted + ti.Ignored + ti.Rejected
			t[ti.Kind] = c.g.ValidationTime(ti.Kind)
		}
		s.validated, s.vtime = append(s.validated, n), append(s.vtime, t)
	}
	return s
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureWindow takes the steady-state rates over cfg.Measure.
func measureWindow(ctx context.Context, mk *market, res *Result) error {
	res.DropsBefore = map[string]uint64{}
	var obs0 uint64
	for _, o := range mk.observers {
		obs0 += o.published.Load()
	}
	a := take(mk.cores)
	for _, w := range a.wire {
		for reason, v := range w.rejected {
			res.DropsBefore[reason] += v
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(mk.cfg.Measure):
	}
	b := take(mk.cores)
	var obs1 uint64
	for _, o := range mk.observers {
		obs1 += o.published.Load()
	}
	secs := b.at.Sub(a.at).Seconds()
	res.Window = b.at.Sub(a.at)
	res.ProcessCPU = float64(b.cpu-a.cpu) / float64(b.at.Sub(a.at))
	res.ObsPublished = float64(obs1-obs0) / secs
	res.PerNode, res.Drops = map[string]Rate{}, map[string]uint64{}
	n := float64(len(mk.cores))
	for i := range mk.cores {
		wa, wb := a.wire[i], b.wire[i]
		for topic, v := range wb.msgs {
			k := shortTopic(topic)
			r := res.PerNode[k]
			r.Msgs += float64(v-wa.msgs[topic]) / secs / n
			r.Bytes += float64(wb.bytes[topic]-wa.bytes[topic]) / secs / n
			r.Duplicates += float64(wb.dups[topic]-wa.dups[topic]) / secs / n
			res.PerNode[k] = r
		}
		r := res.PerNode[controlTopic]
		r.Bytes += float64(wb.control-wa.control) / secs / n
		res.PerNode[controlTopic] = r
		for reason, v := range wb.rejected {
			res.Drops[reason] += v - wa.rejected[reason]
		}
		for kind, v := range b.validated[i] {
			r := res.PerNode[string(kind)]
			r.Validated += float64(v-a.validated[i][kind]) / secs / n
			r.ValidationCPU += (b.vtime[i][kind] - a.vtime[i][kind]).Seconds() / secs / n
			res.PerNode[string(kind)] = r
		}
	}
	for _, c := range mk.cores {
		res.Down += len(mk.providers) - c.up(mk.providers)
	}
	var adds uint64
	var took time.Duration
	for _, c := range mk.cores {
		c.feedMu.Lock()
		adds, took = adds+c.feedAdds, took+c.feedTime
		c.feedMu.Unlock()
	}
	if adds > 0 {
		res.FeedAdd = took / time.Duration(adds)
	}
	res.FeedBuckets = len(mk.cores[0].feed.Query(pricefeedAll))
	return nil
}

// shortTopic turns "/tenzro/scale/heartbeat/1" into "heartbeat".
func shortTopic(t string) string {
	parts := strings.Split(t, "/")
	if len(parts) >= 4 {
		return parts[3]
	}
	return t
}

// measureNewcomer adds a gateway to the running market and times how long
// it takes to see every provider up: announcements reach it at the
// providers' next periodic round, heartbeats within 2 s after.
func measureNewcomer(ctx context.Context, mk *market, res *Result) error {
	m, err := mk.pool.get("core", mk.cfg.Gateways+mk.cfg.Validators)
	if err != nil {
		return err
	}
	h, err := mk.addHost(m)
	if err != nil {
		return err
	}
	c, err := newCore(mk.ctx, "newcomer", m, h, mk.view, mk.cfg)
	if err != nil {
		return err
	}
	defer func() { _ = c.stop(context.Background()) }()
	start := time.Now()
	for _, j := range firstN(len(mk.cores), mk.cfg.Links) {
		if err := mk.connect(h, mk.cores[j].h); err != nil {
			return err
		}
	}
	if err := converge(ctx, []*core{c}, mk.providers, mk.cfg.Converge, func(string, ...any) {}); err != nil {
		return fmt.Errorf("scale: newcomer: %w", err)
	}
	res.Newcomer = time.Since(start)
	for _, k := range []gossip.Kind{gossip.KindAnnounce, gossip.KindHeartbeat, gossip.KindPriceObs} {
		res.NewcomerValidation += c.g.ValidationTime(k)
	}
	return nil
}

func firstN(n, k int) []int {
	out := make([]int, 0, k)
	for i := 0; i < n && i < k; i++ {
		out = append(out, i)
	}
	return out
}

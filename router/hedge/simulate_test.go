package hedge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router/quantile"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Mix is a heavy-tailed latency distribution for simulated providers: a
// lognormal body, and a share of stragglers SlowFactor times slower.
type Mix struct {
	Median     time.Duration // median of the body
	Sigma      float64       // σ of log(latency) in the body
	SlowShare  float64       // fraction of attempts that straggle, independently
	SlowFactor float64       // a straggler takes SlowFactor × a body draw
}

// DefaultMix is 97 % lognormal (median 20 ms, σ 0.5) and 3 % stragglers
// twenty times slower.
var DefaultMix = Mix{Median: 20 * time.Millisecond, Sigma: 0.5, SlowShare: 0.03, SlowFactor: 20}

// Draw returns one attempt's latency.
func (m Mix) Draw(r *rand.Rand) time.Duration {
	x := float64(m.Median) * math.Exp(m.Sigma*r.NormFloat64())
	if r.Float64() < m.SlowShare {
		x *= m.SlowFactor
	}
	return time.Duration(x)
}

// SimConfig is one simulation run.
type SimConfig struct {
	Mix       Mix
	Requests  int
	Providers int    // identical, independent providers; 0 means 5
	Seed      uint64 // same seed, same latency draws: hedging on and off see the same stream
	Hedge     bool
}

// SimStats are a run's end-to-end latencies and costs.
type SimStats struct {
	Requests  int
	Attempts  int // provider calls, hedges included
	Hedges    int
	HedgesWon int
	P50, P95  time.Duration
	P99, P999 time.Duration
	// ExtraPct is the attempts beyond one per request, in percent.
	ExtraPct float64
}

// ErrSim reports an invalid simulation config.
var ErrSim = errors.New("hedge: invalid simulation")

// Simulate routes cfg.Requests sequential requests with the real parts —
// per-provider P² trackers (winners observed, cancelled losers censored),
// the production strategy (weighted, strategy.DefaultWeights), and Run with its hedge delay — against providers
// whose latencies are drawn from cfg.Mix. Attempts wait on timers, so run it
// inside a testing/synctest bubble: time is then virtual, the run takes
// seconds, and every latency is exact. Outside a bubble it runs in real
// time.
func Simulate(cfg SimConfig) (SimStats, error) {
	if cfg.Providers == 0 {
		cfg.Providers = 5
	}
	if cfg.Requests < 1 || cfg.Providers < 2 || cfg.Mix.Median <= 0 || cfg.Mix.SlowFactor < 1 ||
		cfg.Mix.SlowShare < 0 || cfg.Mix.SlowShare > 1 || cfg.Mix.Sigma < 0 {
		return SimStats{}, fmt.Errorf("%w: %+v", ErrSim, cfg)
	}
	draws := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	sel, err := strategy.New(strategy.DefaultWeights, rand.New(rand.NewPCG(cfg.Seed, 0x0dde)))
	if err != nil {
		return SimStats{}, fmt.Errorf("hedge: simulate: %w", err)
	}
	lat, err := quantile.NewSet[peer.ID](quantile.Config{})
	if err != nil {
		return SimStats{}, fmt.Errorf("hedge: simulate: %w", err)
	}
	peers := make([]peer.ID, cfg.Providers)
	for i := range peers {
		peers[i] = peer.ID(fmt.Sprintf("sim-%02d", i))
	}
	clk := clock.New() // virtual inside a synctest bubble
	st := SimStats{Requests: cfg.Requests}
	took := make([]time.Duration, cfg.Requests)
	cands := make([]strategy.Candidate, cfg.Providers)
	for n := range took {
		latency := make(map[peer.ID]time.Duration, cfg.Providers)
		for i, p := range peers {
			s := lat.Snapshot(p)
			cands[i] = strategy.Candidate{Peer: p, Price: 1, P95: s.P95, Mean: s.Mean, LatencyKnown: s.Known(),
				Standing: strategy.MaxStanding, Up: true, BreakerReady: true}
			latency[p] = cfg.Mix.Draw(draws)
		}
		rk, err := sel.Rank(strategy.Weighted, cands, strategy.Filter{})
		if err != nil {
			return SimStats{}, fmt.Errorf("hedge: simulate: %w", err)
		}
		attempt := func(ctx context.Context, c strategy.Candidate) (struct{}, error) {
			t := clk.Timer(latency[c.Peer])
			defer t.Stop()
			select {
			case <-t.C:
				return struct{}{}, nil
			case <-ctx.Done():
				return struct{}{}, ctx.Err()
			}
		}
		_, rep, err := Run(context.Background(), rk.Candidates(), attempt, Options{NoHedge: !cfg.Hedge, Clock: clk})
		if err != nil {
			return SimStats{}, fmt.Errorf("hedge: simulate: request %d: %w", n, err)
		}
		for _, t := range rep.Tries {
			switch t.Fate {
			case Won:
				lat.Observe(t.Peer, t.Elapsed)
			case Cancelled:
				lat.ObserveCensored(t.Peer, t.Elapsed)
			}
		}
		took[n] = rep.Elapsed
		st.Attempts += len(rep.Tries)
		st.Hedges += rep.HedgesDispatched
		if rep.HedgeWon {
			st.HedgesWon++
		}
	}
	slices.Sort(took)
	q := func(p float64) time.Duration { return took[max(0, int(math.Ceil(p*float64(len(took))))-1)] }
	st.P50, st.P95, st.P99, st.P999 = q(0.50), q(0.95), q(0.99), q(0.999)
	st.ExtraPct = 100 * float64(st.Attempts-st.Requests) / float64(st.Requests)
	return st, nil
}

package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Load shape: streams are long enough for a kill to land inside them.
const (
	streamTokens    = 48
	nonStreamTokens = 12
	maxInFlight     = 64
	// joinEvery spaces the join gateway's calls: providers serve callers
	// outside their trusted list (the laptop) from a small shared budget
	// (provider.unknown_rate_per_minute, 6 by default).
	joinEvery = 7 * time.Second
)

// loader drives the fixed offered load.
type loader struct {
	cl       *cluster
	h        *history
	seed     int64
	rate     float64
	offered  atomic.Int64
	inFlight atomic.Int64
	wg       sync.WaitGroup
	ends     sessionEnds
}

// request is call i's request: a unique prompt (and so request digest)
// with a fixed seed.
func (l *loader) request(i int64, stream bool) chatRequest {
	r := chatRequest{Prompt: fmt.Sprintf("chaos seed %d call %d", l.seed, i), Seed: l.seed*1_000_003 + i, Stream: stream, MaxTokens: nonStreamTokens}
	if stream {
		r.MaxTokens = streamTokens
	}
	return r
}

// run offers rate calls/s until ctx ends (open loop: a slow answer does
// not slow the offer), then waits for the calls under way.
func (l *loader) run(ctx context.Context) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.rate))
	defer tick.Stop()
	gws := l.cl.gateways
	var lastJoin time.Time
	for i := int64(0); ; i++ {
		select {
		case <-ctx.Done():
			l.wg.Wait()
			return
		case <-tick.C:
		}
		target := gws[int(i)%len(gws)]
		if l.cl.join != nil && time.Since(lastJoin) >= joinEvery {
			target, lastJoin = l.cl.join, time.Now()
		}
		req := l.request(i, i%2 == 0)
		l.offered.Add(1)
		if l.inFlight.Load() >= maxInFlight {
			now := time.Now()
			l.h.addCall(&callRecord{Kind: "load", Router: target.name, Req: req, Start: now, End: now,
				Err: fmt.Sprintf("client: %d calls already in flight", maxInFlight)})
			continue
		}
		l.inFlight.Add(1)
		l.wg.Go(func() {
			defer l.inFlight.Add(-1)
			l.h.addCall(call(context.Background(), l.cl, target, "load", req))
		})
	}
}

// call makes one recorded call through router p.
func call(ctx context.Context, cl *cluster, p *proc, kind string, req chatRequest) *callRecord {
	return callWatched(ctx, cl, p, kind, req, nil)
}

// callWatched is call with onText called at a stream's first text.
func callWatched(ctx context.Context, cl *cluster, p *proc, kind string, req chatRequest, onText func()) *callRecord {
	c := &callRecord{Kind: kind, Router: p.name, Req: req, Start: time.Now()}
	a, status, err := doCall(ctx, p.api, cl.token(p), cl.m.Model, req, onText)
	c.End, c.Status, c.Answer = time.Now(), status, a
	if err != nil {
		c.Err = err.Error()
	} else if !a.Done {
		c.Err = "incomplete: " + a.Err
	}
	return c
}

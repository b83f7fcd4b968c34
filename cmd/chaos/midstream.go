package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// longTokens makes a stream long enough that a kill at its first text
// lands in the middle of it.
const longTokens = 400

// longStreams are streams in flight at a provider's kill.
type longStreams struct{ done sync.WaitGroup }

func (l *longStreams) wait() { l.done.Wait() }

// midStream opens long streams through the first gateway, waits for their
// first text and returns the provider most of them went to, found by the
// gateway's per-provider attempt counts before and after (the load's own
// calls add a little noise), so that its kill lands mid-stream.
func (m *chaosMonkey) midStream() (*proc, *longStreams) {
	gw := m.cl.gateways[0]
	before := m.attempts(gw)
	const n = 3
	ls := &longStreams{}
	var text sync.WaitGroup
	for range n {
		m.longs++
		req := chatRequest{Prompt: fmt.Sprintf("chaos long stream %d %d", m.ld.seed, m.longs), Seed: m.ld.seed + m.longs,
			MaxTokens: longTokens, Stream: true, NoHedge: true}
		text.Add(1)
		ls.done.Go(func() {
			var once sync.Once
			first := func() { once.Do(text.Done) }
			m.h.addCall(callWatched(context.Background(), m.cl, gw, "long", req, first))
			first() // a stream that failed before any text must not hold the kill
		})
	}
	waitGroupFor(&text, 10*time.Second)
	after := m.attempts(gw)
	best := m.pick(m.cl.providers)
	for _, p := range m.cl.providers {
		if p.live() && after[m.peer[p]]-before[m.peer[p]] > after[m.peer[best]]-before[m.peer[best]] {
			best = p
		}
	}
	return best, ls
}

// attempts are the gateway's attempt counts by provider peer ID.
func (m *chaosMonkey) attempts(gw *proc) map[string]uint64 {
	var s struct {
		Providers map[string]struct {
			Attempts uint64 `json:"attempts"`
		} `json:"providers"`
	}
	out := map[string]uint64{}
	if rpcCall(gw.api, "tenzro_getRouterMetrics", nil, &s) == nil {
		for id, c := range s.Providers {
			out[id] = c.Attempts
		}
	}
	return out
}

func waitGroupFor(wg *sync.WaitGroup, limit time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

package gateway

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// throughputAlpha weighs a new sample in a provider's moving average of
// output tokens per second: recent calls dominate within about ten.
const throughputAlpha = 0.2

// throughputs is the router's own measure of each provider's output
// tokens per second over whole calls it routed (first byte sent to last
// frame received), for `sort: "throughput"` and the preferred minimum.
// A provider's claim of its speed counts for nothing here.
type throughputs struct {
	mu sync.Mutex
	m  map[peer.ID]throughput
}

type throughput struct {
	rate float64 // tokens/s, exponentially weighted
	n    int
}

func (t throughput) known() bool { return t.n > 0 }

func newThroughputs() *throughputs { return &throughputs{m: map[peer.ID]throughput{}} }

// observe records a call of p that produced tokens in d.
func (t *throughputs) observe(p peer.ID, tokens int, d time.Duration) {
	if tokens <= 0 || d <= 0 {
		return
	}
	r := float64(tokens) / d.Seconds()
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.m[p]
	if cur.n == 0 {
		cur.rate = r
	} else {
		cur.rate += throughputAlpha * (r - cur.rate)
	}
	cur.n++
	t.m[p] = cur
}

func (t *throughputs) get(p peer.ID) throughput {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[p]
}

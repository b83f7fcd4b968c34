package consensus

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cometbft/cometbft/p2p"
)

// Watchdog defaults.
const (
	defaultWatchInterval = 2 * time.Second
	// A redial of a missing persistent peer backs off from the watch
	// interval up to this, so a peer that is down for good is not dialled
	// every two seconds forever.
	maxRedialBackoff = 30 * time.Second
	// minStallAfter floors the stall threshold: a chain whose height has
	// not moved for this long is stalled whatever its block time.
	minStallAfter = 15 * time.Second
)

// Health is what the node's watchdog last saw of its chain.
type Health struct {
	Height int64 `json:"height"`
	// LastAdvance is when this node last saw its height move.
	LastAdvance time.Time `json:"last_advance"`
	// Stalled: the height has not moved for longer than StallAfter; the
	// state the node answers from is then older than it looks.
	Stalled    bool          `json:"stalled"`
	StallAfter time.Duration `json:"stall_after"`
	Peers      int           `json:"peers"`         // connected CometBFT peers
	Missing    int           `json:"missing_peers"` // persistent peers not connected
	Redials    uint64        `json:"redials"`       // persistent peers the watchdog redialled
}

// watchdog keeps a node's persistent peers connected and notices when its
// chain stops advancing. CometBFT redials a persistent peer it dropped for
// an error, but when two errors stop the same peer at once the second
// reconnect can see the peer still in the peer set, conclude it is
// connected and end, while the first sees the second's reconnect under way
// and ends too: nothing ever redials. The watchdog does not rely on that
// path: every interval it dials the persistent peers that are not
// connected, with a per-peer backoff.
type watchdog struct {
	interval   time.Duration
	stallAfter time.Duration
	peers      []string // persistent peers, "id@host:port"
	sw         *p2p.Switch
	height     func() int64
	now        func() time.Time
	onRedial   func(peers []string)

	mu     sync.Mutex
	health Health
	next   map[string]time.Time     // earliest next redial per peer
	wait   map[string]time.Duration // current backoff per peer
}

func newWatchdog(cfg Config, sw *p2p.Switch, height func() int64, onRedial func([]string)) *watchdog {
	w := &watchdog{interval: cfg.WatchInterval, stallAfter: cfg.StallAfter, peers: cfg.Peers, sw: sw,
		height: height, now: time.Now, onRedial: onRedial,
		next: map[string]time.Time{}, wait: map[string]time.Duration{}}
	if w.interval <= 0 {
		w.interval = defaultWatchInterval
	}
	if w.stallAfter <= 0 {
		w.stallAfter = DefaultStallAfter(cfg.BlockTime, cfg.EmptyBlocksInterval)
	}
	w.health = Health{Height: height(), LastAdvance: w.now(), StallAfter: w.stallAfter}
	return w
}

// DefaultStallAfter is how long a chain with these block intervals may
// keep its height before it counts as stalled: ten blocks, at least
// minStallAfter.
func DefaultStallAfter(blockTime, emptyBlocksInterval time.Duration) time.Duration {
	gap := max(blockTime, emptyBlocksInterval)
	if gap <= 0 {
		gap = time.Second
	}
	return max(10*gap, minStallAfter)
}

func (w *watchdog) run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check()
		}
	}
}

// check runs one round: height progress, then the missing peers.
func (w *watchdog) check() {
	now := w.now()
	connected := map[string]bool{}
	for _, p := range w.sw.Peers().Copy() {
		connected[string(p.ID())] = true
	}
	var missing, dial []string
	for _, p := range w.peers {
		id, _, _ := strings.Cut(p, "@")
		if connected[id] {
			w.mu.Lock()
			delete(w.next, p)
			delete(w.wait, p)
			w.mu.Unlock()
			continue
		}
		missing = append(missing, p)
		if w.due(p, now) {
			dial = append(dial, p)
		}
	}
	if len(dial) > 0 {
		// Errors are per peer and logged by CometBFT; an address already
		// being dialled (CometBFT's own reconnect) is skipped there.
		_ = w.sw.DialPeersAsync(dial)
		if w.onRedial != nil {
			w.onRedial(dial)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(now)
	w.health.Peers, w.health.Missing = len(connected), len(missing)
	w.health.Redials += uint64(len(dial))
}

// advance notes the height as of now; w.mu is held.
func (w *watchdog) advance(now time.Time) {
	if h := w.height(); h != w.health.Height {
		w.health.Height, w.health.LastAdvance = h, now
	}
	w.health.Stalled = now.Sub(w.health.LastAdvance) > w.stallAfter
}

// due reports whether peer p may be redialled now, and if so pushes its
// next redial out by a doubling backoff.
func (w *watchdog) due(p string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if next, ok := w.next[p]; ok && now.Before(next) {
		return false
	}
	if _, seen := w.wait[p]; !seen {
		// First sight of a missing peer: CometBFT may be reconnecting it
		// already; give that one interval before dialling ourselves.
		w.wait[p] = w.interval
		w.next[p] = now.Add(w.interval)
		return false
	}
	wait := min(2*w.wait[p], maxRedialBackoff)
	w.wait[p], w.next[p] = wait, now.Add(wait)
	return true
}

// snapshot is the health as of now: the height is read afresh, the peers
// are as of the last check.
func (w *watchdog) snapshot() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.now())
	return w.health
}

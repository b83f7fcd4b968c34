package pricefeed

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// Defaults of a Feed.
const (
	DefaultWindow = 10 * time.Minute
	// MinObservers is how many distinct validators attest an entry.
	MinObservers = 2
	// maxSamples bounds the observations kept per entry.
	maxSamples = 4096
	// keepWindows is how many windows are kept (the current and the last).
	keepWindows = 2
)

// Observation is one accepted validator observation.
type Observation struct {
	Observer     [32]byte // validator operator account
	Provider     string   // provider peer ID
	Machine      string   // provider machine ID, hex
	Model        string   // catalog model ID, hex
	Price        uint64   // micro-units charged
	LatencyMs    uint32
	InputTokens  uint64
	OutputTokens uint64
	Success      bool
	Time         time.Time
}

// ClaimsFunc returns what each known provider (by peer ID) claims of
// itself: its hardware class and region.
type ClaimsFunc func() map[string]Claims

// Feed aggregates observations per (provider, model, window).
type Feed struct {
	window time.Duration
	clock  clock.Clock
	claims ClaimsFunc

	mu      sync.Mutex
	buckets map[key]*bucket
	pruned  int64 // the oldest kept window at the last prune
}

type key struct {
	provider, model string
	window          int64 // window start, unix ms
}

type bucket struct {
	machine   string
	samples   []sample
	total     int
	observers map[[32]byte]struct{}
}

type sample struct {
	price, tokens uint64
	latencyMs     uint32
	success       bool
}

// New returns a feed with windows of the given length (0 = DefaultWindow).
// A nil clock is the wall clock; claims may be nil.
func New(window time.Duration, clk clock.Clock, claims ClaimsFunc) *Feed {
	if window <= 0 {
		window = DefaultWindow
	}
	if clk == nil {
		clk = clock.New()
	}
	return &Feed{window: window, clock: clk, claims: claims, buckets: map[key]*bucket{}}
}

// Window returns the window length.
func (f *Feed) Window() time.Duration { return f.window }

func (f *Feed) windowOf(t time.Time) int64 {
	w := f.window.Milliseconds()
	return t.UnixMilli() / w * w
}

// Add records an observation in the window of its own time; observations
// older than the kept windows are dropped.
func (f *Feed) Add(o Observation) {
	w := f.windowOf(o.Time)
	f.mu.Lock()
	defer f.mu.Unlock()
	oldest := f.windowOf(f.clock.Now()) - int64(keepWindows-1)*f.window.Milliseconds()
	if w < oldest {
		return
	}
	f.prune(oldest)
	k := key{provider: o.Provider, model: o.Model, window: w}
	b := f.buckets[k]
	if b == nil {
		b = &bucket{machine: o.Machine, observers: map[[32]byte]struct{}{}}
		f.buckets[k] = b
	}
	b.total++
	b.observers[o.Observer] = struct{}{}
	s := sample{price: o.Price, tokens: o.InputTokens + o.OutputTokens, latencyMs: o.LatencyMs, success: o.Success}
	if len(b.samples) < maxSamples {
		b.samples = append(b.samples, s)
	} else {
		b.samples[b.total%maxSamples] = s
	}
}

// prune drops the buckets of windows before oldest. Nothing gets older
// until the kept windows move, so it scans only then: scanning on every
// Add cost 128 µs per observation at 1,000 providers (docs/SCALE.md).
func (f *Feed) prune(oldest int64) {
	if oldest <= f.pruned {
		return
	}
	f.pruned = oldest
	for k := range f.buckets {
		if k.window < oldest {
			delete(f.buckets, k)
		}
	}
}

// Filter selects entries; empty fields match everything. Model matches a
// model ID hex prefix; Provider a peer ID exactly.
type Filter struct {
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// Query returns one entry per (provider, model): the current window's,
// unless only the previous window's is attested, sorted by provider and
// model.
func (f *Feed) Query(flt Filter) []Entry {
	f.mu.Lock()
	f.prune(f.windowOf(f.clock.Now()) - int64(keepWindows-1)*f.window.Milliseconds())
	best := map[[2]string]key{}
	for k, b := range f.buckets {
		if (flt.Provider != "" && k.provider != flt.Provider) || !hasPrefix(k.model, flt.Model) {
			continue
		}
		id := [2]string{k.provider, k.model}
		cur, ok := best[id]
		if !ok || better(k, b, cur, f.buckets[cur]) {
			best[id] = k
		}
	}
	out := make([]Entry, 0, len(best))
	for _, k := range best {
		out = append(out, f.entry(k, f.buckets[k]))
	}
	f.mu.Unlock()
	if f.claims != nil && len(out) > 0 {
		claims := f.claims()
		for i := range out {
			if c, ok := claims[out[i].Provider]; ok {
				out[i].Claims = &c
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Model < out[j].Model
	})
	return out
}

// better prefers an attested window, then the later one.
func better(k key, b *bucket, cur key, cb *bucket) bool {
	ka, ca := len(b.observers) >= MinObservers, len(cb.observers) >= MinObservers
	if ka != ca {
		return ka
	}
	return k.window > cur.window
}

func hasPrefix(model, prefix string) bool {
	return strings.HasPrefix(model, strings.ToLower(prefix))
}

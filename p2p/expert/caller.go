package expert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// ErrNoHolder marks an expert batch no holder answered correctly: the
// forward pass fails rather than skip an expert.
var ErrNoHolder = errors.New("expert: no holder left for the batch")

// Holder is one holder of an expert, as the caller's table knows it: its
// peer, the machine its receipts must chain to, and its price per
// expert-token (micro-units).
type Holder struct {
	Peer    peer.ID
	Machine identity.MachineID
	Price   uint64
}

// Table names the holders of each expert, first choice first; the others
// are standbys.
type Table interface {
	Holders(model [32]byte, layer, expert int) []Holder
}

// CallerConfig configures a Caller; zero values take the defaults.
type CallerConfig struct {
	Network string   // required
	Model   [32]byte // the MoE model's catalog ID
	Dim     int      // the model's row width, required
	// Timeout bounds one exchange with one holder (default 5 s): a holder
	// silent for longer is retired for the batch.
	Timeout time.Duration
	// BreakerThreshold consecutive failures open a holder's breaker for
	// BreakerCooldown: it is tried after every other holder until then
	// (defaults 3 and 30 s).
	BreakerThreshold int
	BreakerCooldown  time.Duration
	// Now is the clock receipts' validity is checked against (time.Now).
	Now func() time.Time
	// Metrics takes the caller's series (nil: not exported).
	Metrics *Metrics
	// Sampler picks the verified batches handed to OnSample, after each
	// holder signed (nil: none). OnSample runs on the forward pass: it
	// must only hand the batch over (a queue), never wait on a disk.
	Sampler  *Sampler
	OnSample func(*SampledBatch)
}

// Defaults of CallerConfig.
const (
	DefaultCallerTimeout    = 5 * time.Second
	DefaultBreakerThreshold = 3
	DefaultBreakerCooldown  = 30 * time.Second
)

func (c CallerConfig) withDefaults() (CallerConfig, error) {
	switch {
	case c.Network == "":
		return c, errors.New("expert: caller config: network is required")
	case c.Dim <= 0 || c.Dim > MaxDim:
		return c, fmt.Errorf("expert: caller config: dim %d outside 1..%d", c.Dim, MaxDim)
	case c.Timeout < 0 || c.BreakerThreshold < 0 || c.BreakerCooldown < 0:
		return c, errors.New("expert: caller config: timeout and breaker settings must not be negative")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultCallerTimeout
	}
	if c.BreakerThreshold == 0 {
		c.BreakerThreshold = DefaultBreakerThreshold
	}
	if c.BreakerCooldown == 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Batch is one expert's rows in a layer, as the engine hands them over.
type Batch struct {
	Expert    int
	Positions []int
	Rows      [][]float32
}

// Caller sends a serving node's expert batches to holders, verifies every
// receipt before a row is used, and falls back to standby holders. It is
// safe for concurrent use; each call's accounting goes to the Tally in its
// context (WithTally).
type Caller struct {
	h       host.Host
	cfg     CallerConfig
	table   Table
	cache   *identity.CertCache
	certs   certStore
	breaker *breaker
	stats   *callerStats
	log     *slog.Logger
}

// NewCaller makes a caller over h and table.
func NewCaller(h host.Host, cfg CallerConfig, table Table, log *slog.Logger) (*Caller, error) {
	if h == nil || table == nil {
		return nil, errors.New("expert: caller needs a host and a holder table")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Caller{h: h, cfg: cfg, table: table, cache: identity.NewCertCache(256),
		breaker: newBreaker(cfg.BreakerThreshold, cfg.BreakerCooldown, cfg.Now),
		stats:   newCallerStats(cfg.Metrics), log: log.With("protocol", ProtocolID)}, nil
}

// Layer runs every batch of one MoE layer at the holders: one exchange
// per holder (its batches together), then, for the batches of a holder
// that failed, one more round at their next holders. It returns one
// result per batch, in order, or an error wrapping ErrNoHolder.
func (c *Caller) Layer(ctx context.Context, layer int, batches []Batch) ([][][]float32, error) {
	if len(batches) == 0 {
		return nil, nil
	}
	wire, err := c.pack(layer, batches)
	if err != nil {
		return nil, err
	}
	c.stats.layers.Add(1)
	results := make([][][]float32, len(batches))
	tried := make([]map[peer.ID]bool, len(batches))
	lastErr := make([]error, len(batches))
	left := make([]int, len(batches))
	for i := range left {
		left[i] = i
		tried[i] = map[peer.ID]bool{}
	}
	tally := TallyFrom(ctx)
	for len(left) > 0 {
		groups, err := c.assign(layer, batches, left, tried, lastErr)
		if err != nil {
			if end := callEnded(ctx); end != nil {
				return nil, fmt.Errorf("expert: layer %d: %w (%w)", layer, end, err)
			}
			return nil, err
		}
		outcomes := c.run(ctx, layer, groups, wire)
		left = left[:0]
		// The call ended (the buyer left, a hedge won): exchanges cut
		// short by it are no holder's fault and count against nobody.
		cut := callEnded(ctx) != nil
		for _, o := range outcomes {
			if o.err != nil {
				if !cut {
					c.fail(o, layer, tally)
				}
				for _, i := range o.group.idx {
					tried[i][o.group.holder.Peer] = true
					lastErr[i] = o.err
					left = append(left, i)
				}
				continue
			}
			c.succeed(o, tally)
			c.sample(layer, o, wire, tally)
			for j, i := range o.group.idx {
				results[i] = o.rows[j]
			}
		}
		if err := callEnded(ctx); err != nil && len(left) > 0 {
			return nil, fmt.Errorf("expert: layer %d: %w", layer, err)
		}
	}
	return results, nil
}

// pack converts every batch to its wire form once: the standby of a
// failed holder gets the same bytes.
func (c *Caller) pack(layer int, batches []Batch) ([]WireBatch, error) {
	if layer < 0 || layer > 1<<16 {
		return nil, fmt.Errorf("expert: layer %d out of range", layer)
	}
	out := make([]WireBatch, len(batches))
	for i, b := range batches {
		if len(b.Positions) != len(b.Rows) {
			return nil, fmt.Errorf("expert: batch of expert %d has %d positions for %d rows", b.Expert, len(b.Positions), len(b.Rows))
		}
		if b.Expert < 0 || b.Expert > 1<<16 {
			return nil, fmt.Errorf("expert: expert %d out of range", b.Expert)
		}
		rows, err := PackRows(b.Rows, c.cfg.Dim)
		if err != nil {
			return nil, err
		}
		pos := make([]uint32, len(b.Positions))
		for j, p := range b.Positions {
			if p < 0 || p >= MaxPosition {
				return nil, fmt.Errorf("expert: position %d out of range", p)
			}
			pos[j] = uint32(p)
		}
		out[i] = WireBatch{Expert: uint32(b.Expert), Positions: pos, Rows: rows}
	}
	return out, nil
}

// callEnded is why ctx's call is over, or nil. A stream's I/O deadline
// is the context's, and the network poller can report it reached before
// the context's own timer has fired: past the deadline is the call's
// end, not a holder's failure, even when ctx.Err is still nil.
func callEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

package settle

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/filecoin-project/go-clock"
	ds "github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ExpectFunc returns the price the provider itself computed for the call
// with this request digest (its rate card on the receipt's units), if it
// served it.
type ExpectFunc func(digest terms.Hash32) (price uint64, ok bool)

// CollectorDeps are the collector's collaborators.
type CollectorDeps struct {
	Machine    identity.MachineID // this provider's machine
	Chain      Chain
	Submitter  Submitter  // the operator's: it pays the transaction fee, the chain credits the operator
	Expect     ExpectFunc // nil: no price check
	Clock      clock.Clock
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// Collector is a provider's durable store of the payment records gateways
// delivered to it; it settles them on chain in the background.
type Collector struct {
	cfg CollectorConfig
	d   CollectorDeps
	service
	m collectorMetrics

	// Under b.mu (kept by onPending): Σ pending price per (payer,
	// settler) and per settler.
	held      map[[64]byte]uint64
	bySettler map[terms.AccountID]uint64

	umu         sync.Mutex
	underpriced map[terms.AccountID]int
	shortfall   map[terms.AccountID]uint64

	smu    sync.Mutex // submission backoff
	submit backoff

	// afterSubmit, when set (tests), runs after a submission and before
	// its outcomes are stored; true drops the outcomes as a crash would.
	afterSubmit func(context.Context) bool
}

type collectorMetrics struct {
	sideMetrics
	accepted, redelivered, underpriced prometheus.Counter
	rejected                           *prometheus.CounterVec // by reason (code name)
	held                               *prometheus.GaugeVec   // by settler
}

// OpenCollector opens (creating) the collector in cfg.Dir and reloads its
// pending records; Start runs its loop.
func OpenCollector(cfg CollectorConfig, d CollectorDeps) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if d.Machine.IsZero() || d.Chain == nil || d.Submitter == nil {
		return nil, errors.New("settle: collector: Machine, Chain and Submitter are required")
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	reg := registry(d.Registerer)
	c := &Collector{
		cfg: cfg, d: d,
		held: map[[64]byte]uint64{}, bySettler: map[terms.AccountID]uint64{},
		underpriced: map[terms.AccountID]int{}, shortfall: map[terms.AccountID]uint64{},
		m: collectorMetrics{
			sideMetrics: newSideMetrics(reg, "collector"),
			accepted:    counter(reg, "collector", "records_accepted_total", "Payment records verified and stored."),
			redelivered: counter(reg, "collector", "records_redelivered_total", "Deliveries of a record already held (acknowledged again)."),
			underpriced: counter(reg, "collector", "records_underpriced_total", "Stored records priced below this provider's own price for the call."),
			rejected:    counterVec(reg, "collector", "records_rejected_total", "Payment records refused at acceptance, by reason.", "reason"),
			held:        gaugeVec(reg, "collector", "held_microunits", "Σ price of held records not yet settled, per settler.", "settler"),
		},
	}
	var err error
	if c.service, err = openService(cfg.Dir, c.onPending, d.Clock, cfg.Interval, cfg.Retention, d.Log, c.pass); err != nil {
		return nil, fmt.Errorf("settle: collector: %w", err)
	}
	if err := c.loadUnderpriced(); err != nil {
		return nil, errors.Join(err, c.b.close())
	}
	return c, nil
}

const underPrefix = root + "u/"

func underKey(settler terms.AccountID, k rkey) ds.Key {
	return ds.RawKey(underPrefix + settler.String() + "/" + k.String())
}

// loadUnderpriced rebuilds the per-settler underpriced counts and
// shortfalls from their index.
func (c *Collector) loadUnderpriced() error {
	return c.b.st.scan(context.Background(), underPrefix, false, func(key string, val []byte) error {
		rest := strings.TrimPrefix(key, underPrefix)
		hexSettler, _, _ := strings.Cut(rest, "/")
		raw, err := hex.DecodeString(hexSettler)
		if err != nil || len(raw) != 32 || len(val) != 8 {
			return fmt.Errorf("settle: collector: load %s: malformed underpriced index entry", key)
		}
		var s terms.AccountID
		copy(s[:], raw)
		c.underpriced[s]++
		if c.shortfall[s], err = addU(c.shortfall[s], binary.BigEndian.Uint64(val)); err != nil {
			c.shortfall[s] = ^uint64(0)
		}
		return nil
	})
}

func pairKey(payer, settler terms.AccountID) [64]byte {
	var k [64]byte
	copy(k[:32], payer[:])
	copy(k[32:], settler[:])
	return k
}

// onPending keeps the sums; it runs under b.mu.
func (c *Collector) onPending(e *Entry, add bool) error {
	s := e.Record.Settler
	held, err := tally(c.held, pairKey(e.Record.Payer, s), c.bySettler, s, e.Record.Price, add)
	if err != nil {
		return fmt.Errorf("settle: collector: held for payer %s with settler %s: %w", e.Record.Payer, s, err)
	}
	c.m.held.WithLabelValues(s.String()).Set(float64(held))
	return nil
}

// Accept verifies and stores one record delivered by from and returns nil
// only once it is durably stored (then the wire acknowledges). A *Refusal
// is permanent: the sender must not retry that record. Any other error is
// transient (retry). A record priced below Expect's price is kept — it is
// still money — and counted as underpriced. A record already held is nil
// again; a different record for the same (payer, request) is refused.
func (c *Collector) Accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error {
	err := c.accept(ctx, from, rec)
	var ref *Refusal
	if errors.As(err, &ref) {
		c.m.rejected.WithLabelValues(ledger.Code(ref.Code).String()).Inc()
		c.d.Log.Info("settle: collector: record refused", "from", from, "code", ledger.Code(ref.Code), "reason", ref.Reason)
	}
	return err
}

func (c *Collector) accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error {
	if rec == nil {
		return refuse(ledger.CodeMalformed, "no record")
	}
	r := *rec
	if err := checkRecord(&r); err != nil {
		code, reason := fault(err)
		return refuse(code, "%s", reason)
	}
	if r.Provider != c.d.Machine {
		return refuse(ledger.CodeWrongMachine, "record names machine %s, this provider is %s", r.Provider, c.d.Machine)
	}
	if len(r.Receipt) == 0 {
		return refuse(ledger.CodeBadReceipt, "no receipt envelope")
	}
	if sha256.Sum256(r.Receipt) != r.ReceiptHash {
		return refuse(ledger.CodeBadReceipt, "receipt does not hash to the record's receipt hash")
	}
	k := keyOf(&r)
	e := &Entry{Record: r, Peer: []byte(from), At: c.d.Clock.Now().UnixNano()}
	held, err := c.b.lookup(ctx, k)
	if err != nil {
		return err
	}
	if held != nil {
		return c.again(held, e)
	}
	chainID := c.d.Chain.ChainID()
	if chainID == "" {
		// Without the chain ID no signature verifies: refusing would be
		// for good, so the settler is asked to deliver again.
		return fmt.Errorf("settle: collector: accept: %w", ErrNoChain)
	}
	if err := r.VerifySig(chainID); err != nil {
		return refuse(ledger.CodeBadRecordSig, "%v", err)
	}
	h, err := c.d.Chain.Height(ctx)
	switch {
	case errors.Is(err, ErrNoChain):
		// This node has not committed a block since genesis: a provider
		// that just joined serves while its chain catches up, and its
		// settlers' records must clear their debts now, not once it has
		// synced (it waits only provider.record_wait for them). The
		// expiry is checked when the record is submitted: the chain skips
		// an expired record and the report says so.
	case err != nil:
		return fmt.Errorf("settle: collector: accept: %w", err)
	case r.ExpiryHeight <= h:
		return refuse(ledger.CodeExpiredRecord, "expiry height %d passed (chain at %d)", r.ExpiryHeight, h)
	}
	var extra []kv
	if c.d.Expect != nil {
		if want, ok := c.d.Expect(r.RequestDigest); ok {
			e.Expected = want
			if r.Price < want {
				e.Underpriced = true
				var v [8]byte
				binary.BigEndian.PutUint64(v[:], want-r.Price)
				extra = append(extra, kv{underKey(r.Settler, k), v[:]})
			}
		}
	}
	held, err = c.b.add(ctx, e, extra)
	switch {
	case errors.Is(err, ErrDuplicate) && held != nil:
		return c.again(held, e)
	case errors.Is(err, ErrDuplicate):
		return fmt.Errorf("settle: collector: record %s is being stored by another delivery; retry", k)
	case err != nil:
		return fmt.Errorf("settle: collector: accept %s: %w", k, err)
	}
	c.m.accepted.Inc()
	if e.Underpriced {
		c.umu.Lock()
		c.underpriced[r.Settler]++
		if c.shortfall[r.Settler], err = addU(c.shortfall[r.Settler], e.Expected-r.Price); err != nil {
			c.shortfall[r.Settler] = ^uint64(0)
		}
		c.umu.Unlock()
		c.m.underpriced.Inc()
		c.d.Log.Warn("settle: collector: record priced below this provider's price; kept", "settler", r.Settler,
			"payer", r.Payer, "request", r.RequestDigest, "price", r.Price, "expected", e.Expected)
	}
	if pending, _, _ := c.b.counts(); pending >= c.cfg.BatchRecords {
		c.nudge()
	}
	return nil
}

// again answers a delivery of a record already held: the same record is
// acknowledged again, a different one is a conflict.
func (c *Collector) again(held, got *Entry) error {
	if equalRecords(held, got) {
		c.m.redelivered.Inc()
		return nil
	}
	return refuse(ledger.CodeDuplicateRecord, "a different record for request %s of payer %s is already held", got.Record.RequestDigest, got.Record.Payer)
}

// Held is Σ price of records held for (payer, settler) and not yet
// settled: the provider subtracts it from the escrow's available balance.
func (c *Collector) Held(payer, settler terms.AccountID) uint64 {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	return c.held[pairKey(payer, settler)]
}

// Underpriced is how many records held from settler (in any state) were
// priced below this provider's own price for the call.
func (c *Collector) Underpriced(settler terms.AccountID) int {
	c.umu.Lock()
	defer c.umu.Unlock()
	return c.underpriced[settler]
}

// Shortfall is Σ (own price − record price) over settler's underpriced
// records: what the provider was short-changed by.
func (c *Collector) Shortfall(settler terms.AccountID) uint64 {
	c.umu.Lock()
	defer c.umu.Unlock()
	return c.shortfall[settler]
}

// Records returns payer's records in every state, pending first, at most
// limit (0: all).
func (c *Collector) Records(ctx context.Context, payer terms.AccountID, limit int) ([]*Entry, error) {
	return c.b.records(ctx, payer, limit)
}

// CollectorStats is what the collector holds, for metrics and RPC.
type CollectorStats struct {
	Pending     int                        `json:"pending"`
	Settled     int                        `json:"settled"`
	Skipped     int                        `json:"skipped"`
	Held        map[terms.AccountID]uint64 `json:"held"`        // Σ pending price per settler
	Underpriced map[terms.AccountID]int    `json:"underpriced"` // per settler
}

// Stats returns the current counts and sums.
func (c *Collector) Stats() CollectorStats {
	var s CollectorStats
	s.Pending, s.Settled, s.Skipped = c.b.counts()
	c.b.mu.Lock()
	s.Held = make(map[terms.AccountID]uint64, len(c.bySettler))
	for k, v := range c.bySettler {
		s.Held[k] = v
	}
	c.b.mu.Unlock()
	c.umu.Lock()
	s.Underpriced = make(map[terms.AccountID]int, len(c.underpriced))
	for k, v := range c.underpriced {
		s.Underpriced[k] = v
	}
	c.umu.Unlock()
	return s
}

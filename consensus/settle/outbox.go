package settle

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DeliverFunc sends records to the provider peer that served them and
// reports, per record, whether the provider acknowledged (persisted) it;
// err means nothing was acknowledged (retry later).
type DeliverFunc func(ctx context.Context, provider peer.ID, recs []receipt.PaymentRecord) (acked []bool, err error)

// OutboxDeps are the outbox's collaborators.
type OutboxDeps struct {
	Key        ed25519.PrivateKey // the settler account key that signs records
	Chain      Chain
	Submitter  Submitter // settles records still unsettled after the grace period
	Deliver    DeliverFunc
	Clock      clock.Clock           // nil: the real clock
	Log        *slog.Logger          // nil: discard
	Registerer prometheus.Registerer // nil: a private registry
}

// Outbox is a gateway's durable list of the records it signed as settler:
// it delivers them to their providers and, after the grace period,
// settles what the providers have not.
type Outbox struct {
	cfg     OutboxConfig
	d       OutboxDeps
	settler terms.AccountID
	service
	m outboxMetrics

	// Sums of the pending records, under b.mu (kept by onPending).
	byPayer    map[terms.AccountID]uint64
	byProvider map[peer.ID]uint64

	lmu       sync.Mutex // loop state below
	providers map[peer.ID]*deliveryState
	submit    backoff

	// reopened: the outbox's store held records when it was opened (the
	// gateway restarted). Only the deliberately broken build reads it.
	reopened bool
	forgot   atomic.Bool //nolint:unused // read by the chaosbroken build (broken_on.go)
	nudging  atomic.Bool // a delayed nudge is pending (nudgeSoon)
}

type deliveryState struct {
	backoff
	inflight bool
}

type outboxMetrics struct {
	sideMetrics
	signed, delivered, acked prometheus.Counter
	deliverErrors            prometheus.Counter
	outstanding              *prometheus.GaugeVec // by provider peer
}

// OpenOutbox opens (creating) the outbox in cfg.Dir and reloads its
// pending records; Start runs its loops.
func OpenOutbox(cfg OutboxConfig, d OutboxDeps) (*Outbox, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	var errs []error
	if len(d.Key) != ed25519.PrivateKeySize {
		errs = append(errs, fmt.Errorf("settle: outbox: settler key is %d bytes, want %d", len(d.Key), ed25519.PrivateKeySize))
	}
	if d.Chain == nil || d.Submitter == nil || d.Deliver == nil {
		errs = append(errs, errors.New("settle: outbox: Chain, Submitter and Deliver are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	reg := registry(d.Registerer)
	pub := d.Key.Public().(ed25519.PublicKey) //nolint:forcetypeassert // ed25519's Public is documented to return this type
	o := &Outbox{
		cfg: cfg, d: d, settler: terms.AccountOf(pub),
		byPayer: map[terms.AccountID]uint64{}, byProvider: map[peer.ID]uint64{},
		providers: map[peer.ID]*deliveryState{},
		m: outboxMetrics{
			sideMetrics:   newSideMetrics(reg, "outbox"),
			signed:        counter(reg, "outbox", "records_signed_total", "Payment records this gateway signed as settler."),
			delivered:     counter(reg, "outbox", "records_delivered_total", "Payment records sent to their provider (each attempt)."),
			acked:         counter(reg, "outbox", "records_acknowledged_total", "Payment records their provider acknowledged."),
			deliverErrors: counter(reg, "outbox", "deliver_errors_total", "Deliveries to a provider that failed as a whole."),
			outstanding:   gaugeVec(reg, "outbox", "outstanding_microunits", "Σ price of signed records not yet known settled, per provider peer.", "provider"),
		},
	}
	var err error
	if o.service, err = openService(cfg.Dir, o.onPending, d.Clock, cfg.Interval, cfg.Retention, d.Log, o.round); err != nil {
		return nil, fmt.Errorf("settle: outbox: %w", err)
	}
	b := o.b
	o.reopened = len(b.pending) > 0 || b.final[StateSettled] > 0 || b.final[StateSkipped] > 0
	return o, nil
}

// onPending keeps the sums; it runs under b.mu.
func (o *Outbox) onPending(e *Entry, add bool) error {
	prov := e.PeerID()
	out, err := tally(o.byPayer, e.Record.Payer, o.byProvider, prov, e.Record.Price, add)
	if err != nil {
		return fmt.Errorf("settle: outbox: unsettled of payer %s at provider %s: %w", e.Record.Payer, prov, err)
	}
	o.m.outstanding.WithLabelValues(prov.String()).Set(float64(out))
	return nil
}

// Settler is the account that signs this outbox's records.
func (o *Outbox) Settler() terms.AccountID { return o.settler }

// Sign fills rec's Settler, Time, ExpiryHeight (chain height + Validity)
// and Sig, stores it durably for delivery to provider and returns once it
// is on disk; only then may the caller hand rec to the buyer. rec is
// changed only on success. A second record for the same (payer, request
// digest) is ErrDuplicate: a request never gets two signed records.
func (o *Outbox) Sign(ctx context.Context, rec *receipt.PaymentRecord, provider peer.ID) error {
	if rec == nil {
		return errors.New("settle: outbox: sign: no record")
	}
	if err := provider.Validate(); err != nil {
		return fmt.Errorf("settle: outbox: sign: provider peer: %w", err)
	}
	r := *rec
	switch {
	case r.Price == 0:
		return errors.New("settle: outbox: sign: price is 0")
	case r.Provider.IsZero():
		return errors.New("settle: outbox: sign: no provider machine")
	case len(r.Receipt) == 0 || len(r.Receipt) > receipt.MaxReceiptBytes:
		return fmt.Errorf("settle: outbox: sign: receipt is %d bytes, want 1..%d", len(r.Receipt), receipt.MaxReceiptBytes)
	case sha256.Sum256(r.Receipt) != r.ReceiptHash:
		return errors.New("settle: outbox: sign: receipt does not hash to the record's receipt hash")
	}
	chainID := o.d.Chain.ChainID()
	if chainID == "" {
		return fmt.Errorf("settle: outbox: sign: %w", ErrNoChain)
	}
	h, err := o.d.Chain.Height(ctx)
	if err != nil {
		return fmt.Errorf("settle: outbox: sign: %w", err)
	}
	now := o.d.Clock.Now()
	r.Time, r.ExpiryHeight = now.Unix(), h+o.cfg.Validity
	if err := ledger.NewSigner(o.d.Key, chainID).SignRecord(&r); err != nil {
		return fmt.Errorf("settle: outbox: sign: %w", err)
	}
	if forgetAfterRestart(o) {
		*rec = r
		return nil
	}
	e := &Entry{Record: r, Peer: []byte(provider), At: now.UnixNano()}
	if _, err := o.b.add(ctx, e, nil); err != nil {
		return fmt.Errorf("settle: outbox: sign %s: %w", keyOf(&r), err)
	}
	o.m.signed.Inc()
	*rec = r
	o.nudgeSoon()
	return nil
}

// deliverDelay is how long after a record is signed its delivery starts:
// the caller is then handing the record to the buyer, and a delivery
// (a stream to the provider, its fsync) would compete with that answer
// for the CPU and the disk. Records signed meanwhile go in the same
// delivery. A provider waits for a settler's records of earlier calls
// (provider.record_wait), so this is far below what it allows.
const deliverDelay = 2 * time.Millisecond

// nudgeSoon wakes the loop after deliverDelay, once for all the records
// signed until then. The delay is wall-clock time whatever the outbox's
// clock: it only orders work on this machine.
func (o *Outbox) nudgeSoon() {
	if o.nudging.CompareAndSwap(false, true) {
		time.AfterFunc(deliverDelay, func() {
			o.nudging.Store(false)
			o.nudge()
		})
	}
}

// Unsettled is Σ price of this outbox's records for payer not yet known
// settled (skipped records are excluded: they will never be debited).
func (o *Outbox) Unsettled(payer terms.AccountID) uint64 {
	o.b.mu.Lock()
	defer o.b.mu.Unlock()
	return o.byPayer[payer]
}

// Records returns payer's records in every state, pending first, at most
// limit (0: all).
func (o *Outbox) Records(ctx context.Context, payer terms.AccountID, limit int) ([]*Entry, error) {
	return o.b.records(ctx, payer, limit)
}

// OutboxStats is what the outbox holds, for metrics and RPC.
type OutboxStats struct {
	Pending     int                `json:"pending"`   // signed, not known settled
	Delivered   int                `json:"delivered"` // of Pending: acknowledged by their provider
	Settled     int                `json:"settled"`
	Skipped     int                `json:"skipped"`
	Unsettled   uint64             `json:"unsettled"`   // Σ price of Pending
	Outstanding map[peer.ID]uint64 `json:"outstanding"` // Σ price of Pending per provider
}

// Stats returns the current counts and sums.
func (o *Outbox) Stats() OutboxStats {
	var s OutboxStats
	s.Pending, s.Settled, s.Skipped = o.b.counts()
	s.Delivered = len(o.b.snapshot(func(e *Entry) bool { return e.Acked }))
	o.b.mu.Lock()
	defer o.b.mu.Unlock()
	s.Outstanding = make(map[peer.ID]uint64, len(o.byProvider))
	for p, v := range o.byProvider {
		s.Outstanding[p] = v
		if t, err := addU(s.Unsettled, v); err == nil {
			s.Unsettled = t
		} else {
			s.Unsettled = ^uint64(0) // a display total: saturate rather than wrap
		}
	}
	return s
}

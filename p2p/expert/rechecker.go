package expert

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Recheck results, as the metrics count them.
const (
	RecheckMatch    = "match"
	RecheckMismatch = "mismatch"
	RecheckFailed   = "failed"
)

// Rechecker keeps the batches a caller sampled and re-executes them in
// the background: a batch whose recomputed output matches is dropped, one
// that differs becomes Evidence, kept in its own store for a dispute. A
// batch no one could recompute stays for the next rounds, at most
// maxRecheckTries of them: without a standby it would cost an exchange
// at every round forever.
type Rechecker struct {
	samples  *SampleStore
	evidence *SampleStore
	redo     Redoer
	met      *Metrics
	log      *slog.Logger
	now      func() time.Time

	queue                       chan *SampledBatch
	matched, mismatched, failed atomic.Uint64
	dropped                     atomic.Uint64
	tries                       map[string]int // failed rounds per sample file (one round runs at a time)
}

// maxRecheckTries bounds the rounds a batch no one recomputes is kept.
const maxRecheckTries = 3

// RecheckStats counts a Rechecker's work.
type RecheckStats struct {
	Matched, Mismatched, Failed uint64
	Dropped                     uint64 // samples lost to a full queue
}

// NewRechecker re-executes samples with redo, keeping evidence apart.
// met and log may be nil; now defaults to time.Now.
func NewRechecker(samples, evidence *SampleStore, redo Redoer, met *Metrics, log *slog.Logger, now func() time.Time) (*Rechecker, error) {
	if samples == nil || evidence == nil || redo == nil {
		return nil, errors.New("expert: rechecker needs two stores and a redoer")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Rechecker{samples: samples, evidence: evidence, redo: redo, met: met, log: log, now: now,
		queue: make(chan *SampledBatch, 64), tries: map[string]int{}}, nil
}

// Offer queues a sampled batch for storing (CallerConfig.OnSample): it
// never blocks the forward pass; a full queue drops the sample, counted.
func (r *Rechecker) Offer(b *SampledBatch) {
	select {
	case r.queue <- b:
	default:
		r.dropped.Add(1)
	}
}

// Run stores queued samples and re-executes them until ctx ends.
func (r *Rechecker) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-r.queue:
			r.store(b)
			r.drain()
			r.RunOnce(ctx)
		}
	}
}

// drain stores whatever else is queued, so one round covers it.
func (r *Rechecker) drain() {
	for {
		select {
		case b := <-r.queue:
			r.store(b)
		default:
			return
		}
	}
}

// Store writes b to the sample store now (Run does it for queued ones).
func (r *Rechecker) Store(b *SampledBatch) error {
	data, err := EncodeSampledBatch(b)
	if err != nil {
		return err
	}
	_, err = r.samples.Put(b.ID(), data)
	return err
}

func (r *Rechecker) store(b *SampledBatch) {
	if err := r.Store(b); err != nil {
		r.log.Error("expert sample not stored", "layer", b.Layer, "expert", b.Expert, "err", err)
	}
}

// RunOnce re-executes every stored sample once; it is not safe to run
// beside Run.
func (r *Rechecker) RunOnce(ctx context.Context) {
	names, err := r.samples.List()
	if err != nil {
		r.log.Error("expert samples not listed", "err", err)
		return
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		r.one(ctx, name)
	}
}

func (r *Rechecker) one(ctx context.Context, name string) {
	data, err := r.samples.Get(name)
	if err != nil {
		return // pruned meanwhile
	}
	b, err := DecodeSampledBatch(data)
	if err != nil {
		r.log.Error("stored expert sample unreadable, dropped", "file", name, "err", err)
		_ = r.samples.Remove(name)
		r.count(RecheckFailed)
		return
	}
	ev, err := Recheck(ctx, b, r.redo, r.now())
	switch {
	case err != nil:
		r.log.Info("expert sample not re-executed", "file", name, "layer", b.Layer, "expert", b.Expert, "err", err)
		r.count(RecheckFailed)
		if r.tries[name]++; r.tries[name] < maxRecheckTries {
			return
		}
	case ev == nil:
		r.count(RecheckMatch)
	default:
		r.count(RecheckMismatch)
		enc, err := EncodeEvidence(ev)
		if err == nil {
			_, err = r.evidence.Put(b.ID(), enc)
		}
		if err != nil {
			r.log.Error("expert dispute evidence not kept", "file", name, "err", err)
			return // keep the sample: the next round tries again
		}
		ref := ev.Ref()
		r.log.Warn("expert holder's signed output differs from a re-execution: dispute evidence kept",
			"holder_machine", ref.Holder, "layer", ref.Layer, "expert", ref.Expert, "positions", len(b.Positions),
			"receipt_hash", ref.ReceiptHash, "recomputed_by", ev.RecomputedBy)
	}
	delete(r.tries, name)
	_ = r.samples.Remove(name)
}

func (r *Rechecker) count(result string) {
	switch result {
	case RecheckMatch:
		r.matched.Add(1)
	case RecheckMismatch:
		r.mismatched.Add(1)
	default:
		r.failed.Add(1)
	}
	if r.met != nil {
		r.met.Rechecked.WithLabelValues(result).Inc()
	}
}

// Stats returns the rechecker's counters.
func (r *Rechecker) Stats() RecheckStats {
	return RecheckStats{Matched: r.matched.Load(), Mismatched: r.mismatched.Load(), Failed: r.failed.Load(), Dropped: r.dropped.Load()}
}

// Evidence returns the dispute evidence kept, oldest first.
func (r *Rechecker) Evidence() ([]*Evidence, error) {
	names, err := r.evidence.List()
	if err != nil {
		return nil, err
	}
	var out []*Evidence
	for _, n := range names {
		data, err := r.evidence.Get(n)
		if err != nil {
			continue
		}
		e, err := DecodeEvidence(data)
		if err != nil {
			r.log.Error("kept expert evidence unreadable", "file", n, "err", err)
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

package settle

import (
	"cmp"
	"context"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// pass is the collector's round, every Interval or when BatchRecords are
// pending: it submits up to SubmitBatch pending records, oldest first, and
// stores their outcomes.
func (c *Collector) pass(ctx context.Context) {
	now := c.d.Clock.Now()
	c.smu.Lock()
	ready := c.submit.ready(now)
	c.smu.Unlock()
	if !ready {
		return
	}
	due := c.b.snapshot(nil)
	if len(due) == 0 {
		return
	}
	slices.SortFunc(due, func(a, b *Entry) int { return cmp.Compare(a.At, b.At) })
	more := len(due) > c.cfg.SubmitBatch
	due = due[:min(len(due), c.cfg.SubmitBatch)]
	ks := make([]rkey, len(due))
	recs := make([]receipt.PaymentRecord, len(due))
	for i, e := range due {
		ks[i], recs[i] = keyOf(&e.Record), e.Record
	}
	c.m.submitted.Add(float64(len(recs)))
	outs, err := SubmitAll(ctx, c.d.Submitter, recs)
	if c.afterSubmit != nil && c.afterSubmit(ctx) {
		return
	}
	if err != nil {
		c.m.submitErrors.Inc()
	}
	if outs != nil {
		checkDuplicates(ctx, c.d.Chain, "collector", c.d.Log, recs, outs)
		if ferr := finishOutcomes(ctx, c.b, ks, outs, &c.m.sideMetrics); ferr != nil {
			err = firstErr(err, ferr)
		}
	}
	c.smu.Lock()
	if err != nil {
		c.submit.fail(c.d.Clock.Now(), c.cfg.Interval, c.cfg.MaxBackoff)
		c.d.Log.Warn("settle: collector: submitting records", "records", len(recs), "err", err, "retry_in", c.submit.next.Sub(c.d.Clock.Now()))
	} else {
		c.submit.reset()
	}
	c.smu.Unlock()
	if err == nil && more {
		c.nudge()
	}
}

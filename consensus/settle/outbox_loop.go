package settle

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// round is the outbox's round, each tick (or nudge): it starts deliveries
// to the providers that are due, marks what providers settled and settles
// the records past their grace.
func (o *Outbox) round(ctx context.Context) {
	o.deliverDue(ctx)
	o.watchSettled(ctx)
	o.settleDue(ctx)
}

// deliverDue starts one delivery per provider that has unacknowledged
// records, is not being delivered to and is past its backoff.
func (o *Outbox) deliverDue(ctx context.Context) {
	now := o.d.Clock.Now()
	groups := map[peer.ID][]*Entry{}
	for _, e := range o.b.snapshot(func(e *Entry) bool { return !e.Acked }) {
		groups[e.PeerID()] = append(groups[e.PeerID()], e)
	}
	o.lmu.Lock()
	defer o.lmu.Unlock()
	for p, es := range groups {
		st := o.providers[p]
		if st == nil {
			st = &deliveryState{}
			o.providers[p] = st
		}
		if st.inflight || !st.ready(now) {
			continue
		}
		st.inflight = true
		slices.SortFunc(es, func(a, b *Entry) int { return cmp.Compare(a.At, b.At) })
		es = es[:min(len(es), o.cfg.DeliverBatch)]
		o.loop.spawn(func() { o.deliver(ctx, p, es) })
	}
	for p, st := range o.providers {
		if _, busy := groups[p]; !busy && !st.inflight {
			delete(o.providers, p) // nothing left for it: forget its backoff
		}
	}
}

// deliver sends es to p and marks what p acknowledged.
func (o *Outbox) deliver(ctx context.Context, p peer.ID, es []*Entry) {
	recs := make([]receipt.PaymentRecord, len(es))
	for i, e := range es {
		recs[i] = e.Record
	}
	o.m.delivered.Add(float64(len(recs)))
	dctx, cancel := o.d.Clock.WithTimeout(ctx, o.cfg.DeliverTimeout)
	acked, err := o.d.Deliver(dctx, p, recs)
	cancel()
	if err == nil && len(acked) != len(recs) {
		err = errAckCount{got: len(acked), want: len(recs)}
	}
	var ks []rkey
	for i := range acked {
		if err == nil && acked[i] {
			ks = append(ks, keyOf(&recs[i]))
		}
	}
	if len(ks) > 0 {
		n, uerr := o.b.update(ctx, ks, func(e *Entry) { e.Acked = true })
		o.m.acked.Add(float64(n))
		if uerr != nil {
			err = uerr
		}
	}
	// Records signed for p while this delivery ran were skipped by the
	// loop (one delivery per provider at a time): go again at once.
	more := err == nil && len(o.b.snapshot(func(e *Entry) bool { return !e.Acked && e.PeerID() == p })) > 0
	o.lmu.Lock()
	defer o.lmu.Unlock()
	st := o.providers[p]
	if st == nil {
		st = &deliveryState{}
		o.providers[p] = st
	}
	st.inflight = false
	switch {
	case err != nil:
		o.m.deliverErrors.Inc()
		st.fail(o.d.Clock.Now(), o.cfg.Interval, o.cfg.MaxBackoff)
		o.d.Log.Debug("settle: outbox: delivery failed", "provider", p, "records", len(recs), "err", err, "retry_in", st.next.Sub(o.d.Clock.Now()))
	case len(ks) < len(recs):
		// The provider answered but kept some back: try those again later.
		st.fail(o.d.Clock.Now(), o.cfg.Interval, o.cfg.MaxBackoff)
		o.d.Log.Info("settle: outbox: provider did not acknowledge every record", "provider", p, "acked", len(ks), "sent", len(recs))
	default:
		st.reset()
		if more {
			o.nudge()
		}
	}
}

type errAckCount struct{ got, want int }

func (e errAckCount) Error() string {
	return fmt.Sprintf("settle: outbox: delivery answered %d acknowledgements for %d records", e.got, e.want)
}

// watchSettled marks the delivered records the provider has settled,
// from CheckAfter on, so what the outbox counts as unsettled (and a
// buyer's spendable escrow) follows the chain within seconds rather than
// after the grace period.
func (o *Outbox) watchSettled(ctx context.Context) {
	now := o.d.Clock.Now()
	early, late := now.Add(-o.cfg.CheckAfter).UnixNano(), now.Add(-o.cfg.Grace).UnixNano()
	due := o.b.snapshot(func(e *Entry) bool { return e.Acked && e.At <= early && e.At > late })
	if len(due) == 0 {
		return
	}
	h, err := o.d.Chain.Height(ctx)
	if err != nil {
		return
	}
	due = due[:min(len(due), o.cfg.SubmitBatch)]
	// A lookup that fails leaves the rest to the next round.
	if _, _, err := o.markOnChain(ctx, due, h); err != nil {
		o.d.Log.Warn("settle: outbox: marking settled records", "err", err)
	}
}

// markOnChain looks each of due up on chain, whose height is h: a record
// the chain settled is marked settled, one whose call it settled with
// another record is marked skipped (preempted), and the records the chain
// does not have are returned. A failed lookup ends the lookups
// (lookupErr); what was found before it is marked all the same.
func (o *Outbox) markOnChain(ctx context.Context, due []*Entry, h int64) (rest []*Entry, lookupErr, err error) {
	var found, lost []rkey
	var why []string
	for _, e := range due {
		got, reason, err := lookup(ctx, o.d.Chain, &e.Record)
		if err != nil {
			lookupErr = err
			break
		}
		switch got {
		case settledSame:
			found = append(found, keyOf(&e.Record))
		case settledElse:
			lost, why = append(lost, keyOf(&e.Record)), append(why, reason)
		default:
			rest = append(rest, e)
		}
	}
	moved, err := o.b.finish(ctx, found, func(_ int, e *Entry) { e.State, e.Height = StateSettled, h })
	o.m.settled.Add(float64(len(moved)))
	if err == nil {
		err = o.preempted(ctx, lost, why, h)
	}
	return rest, lookupErr, err
}

// preempted marks the records whose call the chain settled with another
// record (why[i] says which) skipped, counts and logs each.
func (o *Outbox) preempted(ctx context.Context, ks []rkey, why []string, h int64) error {
	if len(ks) == 0 {
		return nil
	}
	moved, err := o.b.finish(ctx, ks, func(i int, e *Entry) {
		e.State, e.Height, e.Code, e.Reason = StateSkipped, h, uint32(ledger.CodeDuplicateRecord), truncate(why[i])
	})
	for _, e := range moved {
		o.m.preempted.Inc()
		logPreempted(o.d.Log, "outbox", &e.Record, e.Reason)
	}
	return err
}

// settleDue settles the records past their grace period: those the chain
// already has are marked settled, the rest are submitted.
func (o *Outbox) settleDue(ctx context.Context) {
	now := o.d.Clock.Now()
	o.lmu.Lock()
	ready := o.submit.ready(now)
	o.lmu.Unlock()
	if !ready {
		return
	}
	cut := now.Add(-o.cfg.Grace).UnixNano()
	due := o.b.snapshot(func(e *Entry) bool { return e.At <= cut })
	if len(due) == 0 {
		return
	}
	slices.SortFunc(due, func(a, b *Entry) int { return cmp.Compare(a.At, b.At) })
	more := len(due) > o.cfg.SubmitBatch
	due = due[:min(len(due), o.cfg.SubmitBatch)]
	err := o.settle(ctx, due)
	o.lmu.Lock()
	if err != nil {
		o.submit.fail(o.d.Clock.Now(), o.cfg.Interval, o.cfg.MaxBackoff)
		o.d.Log.Warn("settle: outbox: settling records past grace", "records", len(due), "err", err, "retry_in", o.submit.next.Sub(o.d.Clock.Now()))
	} else {
		o.submit.reset()
	}
	o.lmu.Unlock()
	if err == nil && more {
		o.nudge()
	}
}

// settle checks each of due on chain and submits those not settled.
func (o *Outbox) settle(ctx context.Context, due []*Entry) error {
	h, err := o.d.Chain.Height(ctx)
	if err != nil {
		return err
	}
	rest, chainErr, err := o.markOnChain(ctx, due, h)
	if err != nil || chainErr != nil || len(rest) == 0 {
		return firstErr(err, chainErr)
	}
	send := make([]rkey, len(rest))
	recs := make([]receipt.PaymentRecord, len(rest))
	for i, e := range rest {
		send[i], recs[i] = keyOf(&e.Record), e.Record
	}
	o.m.submitted.Add(float64(len(recs)))
	outs, subErr := SubmitAll(ctx, o.d.Submitter, recs)
	if subErr != nil {
		o.m.submitErrors.Inc()
	}
	if outs == nil {
		return subErr
	}
	checkDuplicates(ctx, o.d.Chain, "outbox", o.d.Log, recs, outs)
	return firstErr(finishOutcomes(ctx, o.b, send, outs, &o.m.sideMetrics), subErr)
}

// finishOutcomes is shared by both halves: Settled and Duplicate become
// StateSettled at the outcome's height, Skipped and Preempted become
// StateSkipped with their code, Err stays pending.
func finishOutcomes(ctx context.Context, b *book, ks []rkey, outs []Outcome, m *sideMetrics) error {
	var fin []rkey
	var fo []Outcome
	for i, out := range outs {
		if out.Status != Err {
			fin, fo = append(fin, ks[i]), append(fo, out)
		}
	}
	_, err := b.finish(ctx, fin, func(i int, e *Entry) {
		switch fo[i].Status {
		case Settled, Duplicate:
			e.State, e.Height = StateSettled, fo[i].Height
		case Skipped, Preempted:
			e.State, e.Height, e.Code, e.Reason = StateSkipped, fo[i].Height, uint32(fo[i].Code), truncate(fo[i].Reason)
		}
	})
	if err != nil {
		return err
	}
	for _, out := range fo {
		m.noteOutcome(out)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Where a serving provider keeps, per model, the binding of each sampled
// receipt to the record paying for its call, and the evidence it has
// taken to the chain.
const (
	expertBindingsDir = "experts/bindings"
	expertDisputedDir = "experts/disputed"
)

// Outcomes of taking one piece of evidence to the chain, as the metrics
// count them. Evidence still waiting (no binding yet, record unsettled)
// is not counted: it is looked at again next round.
const (
	DisputeOpened  = "opened"  // this node opened the dispute now
	DisputeKnown   = "known"   // the dispute exists already (opened before a restart, or by another)
	DisputeRefused = "refused" // never opened automatically: window over, too large, no possible committee, refused by the chain, or recomputed elsewhere
	DisputeFailed  = "failed"  // not now (funds, chain unreachable): retried
)

// DisputeChain is what opening an expert-batch dispute reads of the chain.
type DisputeChain interface {
	Record(ctx context.Context, payer terms.AccountID, digest terms.Hash32) (ledger.SettledRecord, bool, error)
	Dispute(ctx context.Context, id terms.Hash32) (ledger.Dispute, bool, error)
	Params(ctx context.Context) (ledger.Params, error)
}

var _ DisputeChain = (*consensus.Node)(nil)

// ExpertDisputerConfig is what an ExpertDisputer works on: one model's
// stores of evidence (the rechecker's), of bindings (kept as records are
// signed) and of evidence taken to the chain, the chain, the account
// that bonds, and the bond (0: the chain's dispute_min_bond).
type ExpertDisputerConfig struct {
	Evidence, Bindings, Disputed *expert.SampleStore
	Chain                        DisputeChain
	Account                      Submitter
	Bond                         uint64
	// Interval is the time between rounds of Run.
	Interval time.Duration
	Clock    clock.Clock     // default: the real clock
	Metrics  *expert.Metrics // may be nil
	Log      *slog.Logger    // default: discarded
}

// Validate reports a config the disputer cannot run with.
func (c ExpertDisputerConfig) Validate() error {
	switch {
	case c.Evidence == nil || c.Bindings == nil || c.Disputed == nil:
		return errors.New("provider: expert disputer: the evidence, bindings and disputed stores are required")
	case c.Chain == nil || c.Account == nil:
		return errors.New("provider: expert disputer: a chain and an account are required")
	case c.Interval <= 0:
		return fmt.Errorf("provider: expert disputer: interval %s, want > 0", c.Interval)
	}
	return nil
}

// ExpertDisputer takes one model's dispute evidence to the chain: for
// each piece, once the record that paid its holder for the call has
// settled, it opens the dispute over the batch with the configured bond
// from the operator's account, and marks the evidence taken so no bond is
// posted twice. A restart between the opening and the mark finds the
// dispute on chain and marks it then.
type ExpertDisputer struct {
	cfg ExpertDisputerConfig

	opened, known, refused, failed atomic.Uint64
}

// NewExpertDisputer checks cfg and fills its defaults.
func NewExpertDisputer(cfg ExpertDisputerConfig) (*ExpertDisputer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &ExpertDisputer{cfg: cfg}, nil
}

// DisputeStats counts what a serving provider's disputer did since start.
type DisputeStats struct {
	Opened, Known, Refused, Failed uint64
}

// Stats returns the disputer's counters.
func (d *ExpertDisputer) Stats() DisputeStats {
	return DisputeStats{Opened: d.opened.Load(), Known: d.known.Load(), Refused: d.refused.Load(), Failed: d.failed.Load()}
}

// Run takes evidence to the chain every interval until ctx ends.
func (d *ExpertDisputer) Run(ctx context.Context) {
	every(ctx, d.cfg.Clock, d.cfg.Interval, d.Round)
}

// Round looks once at every piece of evidence not yet taken to the chain.
func (d *ExpertDisputer) Round(ctx context.Context) {
	names, err := d.cfg.Evidence.List()
	if err != nil {
		d.cfg.Log.Error("expert evidence not listed", "err", err)
		return
	}
	if len(names) == 0 {
		return
	}
	params, err := d.cfg.Chain.Params(ctx)
	if err != nil {
		d.cfg.Log.Warn("expert disputes wait: chain parameters unreadable", "err", err)
		return
	}
	bond := d.cfg.Bond
	if bond == 0 {
		bond = params.DisputeMinBond
	}
	// One listing of each store per round, however much evidence waits.
	done, err := d.cfg.Disputed.Index()
	if err != nil {
		d.cfg.Log.Error("expert disputes not listed", "err", err)
		return
	}
	bindings, err := d.cfg.Bindings.Index()
	if err != nil {
		d.cfg.Log.Error("expert dispute bindings not listed", "err", err)
		return
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		if _, taken := done[expert.KeyOf(name)]; !taken { // evidence is stored under its batch's ID
			d.one(ctx, name, bond, params, bindings)
		}
	}
}

// one takes the evidence in file name to the chain if it is ready.
func (d *ExpertDisputer) one(ctx context.Context, name string, bond uint64, params ledger.Params, bindings map[string]string) {
	data, err := d.cfg.Evidence.Get(name)
	if err != nil {
		return // pruned meanwhile
	}
	ev, err := expert.DecodeEvidence(data)
	if err != nil {
		return // the rechecker logs unreadable evidence
	}
	id := ev.Batch.ID()
	if len(ev.RecomputeReceipt) != 0 {
		// Another holder's recomputation is its word against the
		// accused's: a bond is posted only on this node's own weights.
		d.mark(id, DisputeRefused, "recomputed at another holder, not with this node's weights; check it and dispute it by hand (tenzrod tx dispute open --batch)")
		return
	}
	ref := ev.Ref()
	b, err := d.binding(bindings, ref.ReceiptHash)
	if err != nil || b == nil {
		if err != nil {
			d.cfg.Log.Error("expert dispute binding unreadable", "receipt_hash", ref.ReceiptHash, "err", err)
		}
		return // the call's record is not signed yet: next round
	}
	rec, settled, err := d.cfg.Chain.Record(ctx, b.Payer, b.RequestDigest)
	if err != nil || !settled {
		return // delivered and settled by the outbox in its time
	}
	// The chain asks a share of the record's price above its minimum.
	bond = max(bond, ledger.DisputeBond(params, rec.Record.Price, 0))
	open, err := ev.DisputeOpen(b.Payer, b.RequestDigest, b.ReceiptHashes, bond)
	if err != nil {
		d.mark(id, DisputeRefused, err.Error())
		return
	}
	did := ledger.DisputeID(open.Subject)
	if _, exists, err := d.cfg.Chain.Dispute(ctx, did); err == nil && exists {
		d.mark(id, DisputeKnown, did.String())
		return
	}
	res, err := d.cfg.Account.Submit(ctx, open)
	switch code := ledger.CodeOf(err); {
	case err == nil:
		d.mark(id, DisputeOpened, did.String())
		d.cfg.Log.Warn("expert batch disputed on chain", "dispute", did, "holder_machine", ref.Holder, "layer", ref.Layer,
			"expert", ref.Expert, "record", b.RequestDigest, "bond", bond, "height", res.Height)
	case code == ledger.CodeDuplicate:
		d.mark(id, DisputeKnown, did.String())
	case code == ledger.CodeDisputeWindow || code == ledger.CodeTooLarge || code == ledger.CodeBadEvidence || code == ledger.CodeMalformed:
		d.mark(id, DisputeRefused, err.Error())
	case code == ledger.CodeNoCommittee:
		// No validator but the accused declared the model's weights: the
		// chain refused the dispute before taking the bond. Asking again
		// every round would only repeat that; once a validator declares
		// the model, the evidence can be disputed by hand.
		d.mark(id, DisputeRefused, err.Error()+"; once validators declare the model, dispute it by hand (tenzrod tx dispute open --batch)")
	default:
		d.count(DisputeFailed)
		d.cfg.Log.Error("expert dispute not opened; retried next round", "dispute", did, "bond", bond, "err", err)
	}
}

// binding returns the newest binding of the receipt in the round's
// index of bindings, nil when none.
func (d *ExpertDisputer) binding(bindings map[string]string, receiptHash terms.Hash32) (*expert.Binding, error) {
	name, ok := bindings[expert.IndexKey(receiptHash)]
	if !ok {
		return nil, nil
	}
	data, err := d.cfg.Bindings.Get(name)
	if err != nil {
		return nil, err
	}
	b, err := expert.DecodeBinding(data)
	if err != nil {
		return nil, err
	}
	if !b.Binds(receiptHash) {
		return nil, fmt.Errorf("provider: binding %s lists other receipts", name)
	}
	return b, nil
}

// mark records the evidence as taken to the chain (or never to be), so
// no later round posts its bond again.
func (d *ExpertDisputer) mark(id [32]byte, outcome, what string) {
	d.count(outcome)
	if outcome == DisputeRefused {
		d.cfg.Log.Error("expert evidence not disputed", "reason", what)
	}
	if _, err := d.cfg.Disputed.Put(id, []byte(outcome+" "+what+"\n")); err != nil && !errors.Is(err, context.Canceled) {
		d.cfg.Log.Error("expert dispute not marked; the next round asks the chain again", "err", err)
	}
}

func (d *ExpertDisputer) count(outcome string) {
	switch outcome {
	case DisputeOpened:
		d.opened.Add(1)
	case DisputeKnown:
		d.known.Add(1)
	case DisputeRefused:
		d.refused.Add(1)
	default:
		d.failed.Add(1)
	}
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.Disputes.WithLabelValues(outcome).Inc()
	}
}

package gateway

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/bits"
	"sort"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// Why a session has no successor: the values of successor_reason and of
// the no-successor metric's label.
const (
	ReasonContinuityOff   = "continuity_off"    // the session did not ask for one
	ReasonUnsupported     = "unsupported"       // this gateway cannot reach successors
	ReasonNoOther         = "no_other_provider" // nobody else serves the model, up and warm
	ReasonNoStandby       = "no_standby"        // no other provider announces standby
	ReasonJurisdiction    = "jurisdiction"      // none in the session's jurisdiction
	ReasonSameOperator    = "same_operator"     // every candidate is the primary's own operator (or, off chain, machine)
	ReasonUnregistered    = "unregistered"      // candidates the chain does not know have no operator
	ReasonAssignFailed    = "assign_failed"     // every candidate refused or missed the assignment
	ReasonUnfunded        = "standby_unfunded"  // the payer's escrow could not fund the standby stream
	ReasonChallengeFailed = "challenge_failed"  // the successor could not prove it holds the latest state
)

// maxAssignTries bounds the successors tried per primary in one turn.
const maxAssignTries = 3

// successorTimeout bounds one assignment or challenge; streamTimeout one
// stream transaction (it waits for its block, behind this account's other
// transactions).
const (
	successorTimeout = 5 * time.Second
	streamTimeout    = 20 * time.Second
)

// standbys lists the providers eligible to succeed primary in session e,
// cheapest standby first, then by standing; when none is, the reason. The
// operator rule: with a chain (Deps.Operators), a different on-chain
// operator account than the primary's, so an unregistered provider is
// never eligible; without one, any other machine.
func (g *Gateway) standbys(ctx context.Context, t *sessionTurn, primary *member, exclude map[peer.ID]bool) ([]*member, []uint32, string) {
	reason := ReasonNoOther
	worse := func(r string) { // keep the most specific reason seen
		rank := map[string]int{ReasonNoOther: 0, ReasonNoStandby: 1, ReasonJurisdiction: 2, ReasonUnregistered: 3, ReasonSameOperator: 4}
		if rank[r] > rank[reason] {
			reason = r
		}
	}
	var out []*member
	var standing []uint32
	for _, o := range g.table.OffersOf(t.modelID()) {
		if o.Peer == primary.peer || o.Machine == primary.machine || exclude[o.Peer] || o.Barred ||
			o.Status != router.StatusUp || o.State != gossip.StateWarm || !o.Serves(t.level) || !g.breakers.Ready(o.Peer) ||
			g.table.Suspected(o.Peer) { // its connection just closed: not one to stand by on
			continue
		}
		if o.Standby == nil || len(o.Standby.HPKEKey) != gossip.StandbyKeySize {
			worse(ReasonNoStandby)
			continue
		}
		if !inRegion(t.jurisdiction, o.Region) {
			worse(ReasonJurisdiction)
			continue
		}
		m := &member{peer: o.Peer, machine: o.Machine, region: o.Region, fee: o.Standby.FeePerHour, key: o.Standby.HPKEKey}
		if g.operators != nil {
			op, ok, err := g.operators.Operator(ctx, o.Peer, o.Machine)
			if err != nil {
				g.log.Warn("session: operator of a standby candidate", "peer", o.Peer, "err", err)
				continue
			}
			if !ok {
				worse(ReasonUnregistered)
				continue
			}
			if op == primary.operator {
				worse(ReasonSameOperator)
				continue
			}
			m.operator = op
		}
		out = append(out, m)
		standing = append(standing, g.standing(o))
	}
	if len(out) == 0 {
		return nil, nil, reason
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := idx[a], idx[b]
		if out[x].fee != out[y].fee {
			return out[x].fee < out[y].fee
		}
		if standing[x] != standing[y] {
			return standing[x] > standing[y]
		}
		return out[x].peer < out[y].peer
	})
	sorted, st := make([]*member, len(out)), make([]uint32, len(out))
	for i, j := range idx {
		sorted[i], st[i] = out[j], standing[j]
	}
	return sorted, st, ""
}

// operatorOf fills in a primary's operator account (with a chain). An
// unregistered primary (allowed at level none) has none: any registered
// successor is then another operator.
func (g *Gateway) operatorOf(ctx context.Context, m *member) {
	if g.operators == nil || m.operator != "" {
		return
	}
	op, ok, err := g.operators.Operator(ctx, m.peer, m.machine)
	if err == nil && ok {
		m.operator = op
	}
}

// standbyDeposit is rate × horizon, in micro-units (at least 1); false on
// overflow.
func standbyDeposit(rate uint64, horizon time.Duration) (uint64, bool) {
	hi, lo := bits.Mul64(rate, uint64(horizon/time.Second))
	if hi >= 3600 { // the quotient would not fit 64 bits
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, 3600)
	return max(q, 1), true
}

// engage funds and assigns a successor for primary: the stream escrow
// first (the successor holds a session only against it), then the
// assignment naming the primary. reused is a successor already funded in
// this session (its stream is kept).
func (g *Gateway) engage(ctx context.Context, t *sessionTurn, primary, m *member) error {
	fresh, height := false, int64(0)
	if m.stream == "" && g.streams != nil && m.fee > 0 {
		fresh = true
		dep, ok := standbyDeposit(m.fee, g.cfg.Sessions.StandbyHorizon)
		if !ok {
			return fmt.Errorf("%w: standby deposit of %d an hour over %s overflows", errUnfunded, m.fee, g.cfg.Sessions.StandbyHorizon)
		}
		sctx, cancel := g.clock.WithTimeout(ctx, streamTimeout)
		id, h, err := g.streams.Open(sctx, t.payer, m.machine, m.fee, dep)
		cancel()
		if err != nil {
			return fmt.Errorf("%w: %w", errUnfunded, err)
		}
		m.stream, height = id, h
		g.sessionMetrics.streamsOpened.Inc()
		t.opened = append(t.opened, m)
	}
	a := SessionAssignment{SessionID: t.id, ModelID: t.model, PrimaryPeer: primary.peer, PrimaryMachine: primary.machine[:]}
	if p, err := terms.ParseAccountID(t.payer); err == nil {
		a.Payer = p[:]
	}
	if m.stream != "" {
		if b, err := hex.DecodeString(m.stream); err == nil {
			a.StreamID, a.StreamHeight = b, height
		}
	}
	// A successor given a fresh stream first waits for its own copy of the
	// chain to reach the stream's block (a.StreamHeight), so its answer
	// may take a follower's lag: under load that is several blocks.
	bound := successorTimeout
	if fresh {
		bound += streamTimeout
	}
	actx, cancel := g.clock.WithTimeout(ctx, bound)
	defer cancel()
	start := g.clock.Now()
	for {
		err := g.successors.Assign(actx, m.peer, a)
		if err == nil || !fresh || (g.clock.Since(start) >= assignSyncWait && !behind(err)) {
			return err
		}
		// A stream this gateway just saw committed may not be in the
		// successor's own copy of the chain yet (a follower trails by a
		// block): it refuses the assignment as unfunded until it is.
		select {
		case <-g.clock.After(assignRetry):
		case <-actx.Done():
			return err
		}
	}
}

// assignRetry spaces the assignments of a freshly funded successor, for
// up to assignSyncWait (a few blocks of a follower's lag).
const (
	assignRetry    = 250 * time.Millisecond
	assignSyncWait = 3 * time.Second
)

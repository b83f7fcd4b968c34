package validator

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// probeAccount is the local ledger account validators' probes are billed
// to; it is topped up to probeFloat before each round.
const (
	probeAccount = "validator-probe"
	probeFloat   = 1 << 40
	probePrompt  = "ping"
	probeTokens  = 4
)

// prober runs on validator nodes: every interval it sends each registered,
// live provider one tiny call (max_tokens 4) through its own gateway over
// /tenzro/infer/1.0.0, pinned to that provider, rotating over the models
// it serves. The gateway verifies the receipt against the provider's
// machine (the table pins each registered peer to its on-chain machine) and
// reports the call to the obsPublisher, which gossips the observation. At
// most one probe per provider per interval leaves this node.
type prober struct {
	v        *Validator
	interval time.Duration
	next     map[peer.ID]int // model rotation per provider

	mu      sync.Mutex
	tallies map[identity.MachineID]probeTally // since the last take

	loop
}

func newProber(v *Validator, interval time.Duration) *prober {
	return &prober{v: v, interval: interval, next: map[peer.ID]int{}, tallies: map[identity.MachineID]probeTally{}}
}

// probeTally counts a provider's probes: those whose receipt verified and
// all of them.
type probeTally struct{ ok, total int }

// take returns the probe tallies since the last take and resets them; the
// SLA verdicts count them as the signed challenge of availability.
func (p *prober) take() map[identity.MachineID]probeTally {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tallies
	p.tallies = map[identity.MachineID]probeTally{}
	return t
}

func (p *prober) Start(ctx context.Context) error {
	p.start(ctx, p.run)
	return nil
}

func (p *prober) run(ctx context.Context) {
	// Validators start out of phase, so probes do not arrive together.
	wait := time.Duration(rand.Int64N(int64(p.interval)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		start := time.Now()
		p.round(ctx)
		wait = max(0, p.interval-time.Since(start))
	}
}

// round probes each registered, live provider once.
func (p *prober) round(ctx context.Context) {
	if !consensus.Ready(ctx, p.v.d.Chain) {
		return
	}
	// With a ProbePayer the chain escrow pays; otherwise a local account.
	if bal, err := p.v.d.Store.Balance(probeAccount); p.v.cfg.ProbePayer == "" && err == nil && bal < probeFloat {
		_ = p.v.d.Store.Credit(probeAccount, probeFloat-bal)
	}
	me := p.v.obs.account()
	for _, v := range p.v.d.Table.List() {
		if ctx.Err() != nil {
			return
		}
		if v.Registered == nil || !*v.Registered || v.Status != router.StatusUp || len(v.Models) == 0 {
			continue
		}
		pid, err := peer.Decode(v.PeerID)
		if err != nil {
			continue
		}
		m, err := identity.ParseMachineID(v.MachineID)
		if err != nil {
			continue
		}
		if op, _, ok, err := p.v.d.Registry.ProviderOperator(ctx, m); err != nil || !ok || op == me {
			continue // its own provider: peers would refuse the observation
		}
		i := p.next[pid] % len(v.Models)
		p.next[pid] = i + 1
		ok, counted := p.probe(ctx, pid, v.Models[i].ModelID)
		if !counted {
			continue
		}
		p.mu.Lock()
		t := p.tallies[m]
		t.total++
		if ok {
			t.ok++
		}
		p.tallies[m] = t
		p.mu.Unlock()
	}
}

// probe sends one probe and reports whether its receipt verified; a probe
// that could not be paid (this validator's escrow is short, or the
// provider holds this settler to a debt) is not counted either way.
func (p *prober) probe(ctx context.Context, pid peer.ID, model string) (ok, counted bool) {
	ctx, cancel := context.WithTimeout(ctx, max(p.interval/2, 5*time.Second))
	defer cancel()
	// A chat request: every engine a provider may front serves chat
	// (some serve nothing else), and it is what buyers send, so a probe
	// looks like any other call.
	req := &gateway.Request{Model: model, Chat: true, Messages: []inference.Message{{Role: "user", Content: probePrompt}},
		PinProvider: pid.String(), NoHedge: true, Payer: cmp.Or(p.v.cfg.ProbePayer, probeAccount), Probe: true}
	req.Sampling.MaxTokens = probeTokens
	res, err := p.v.d.Gateway.Route(ctx, req, func(gateway.Delta) error { return nil })
	ok = err == nil && res != nil && res.Receipt != nil && res.Receipt.Verified
	p.v.d.Log.Debug("price probe", "provider", pid, "model", model, "ok", ok, "err", err)
	var ge *gateway.Error
	if errors.As(err, &ge) && ge.Status == http.StatusPaymentRequired {
		p.v.d.Log.Warn("probe not paid; not counted", "provider", pid, "code", ge.Code, "err", err)
		return false, false
	}
	return ok, true
}

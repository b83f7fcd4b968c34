package validator

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/router"
)

// verdictLoop runs on validator nodes: it samples the provider table
// through each chain "hour" (Params.HourSeconds) and, when the hour ends,
// submits one SLAVerdict per registered provider it observed from the
// operator account HOME/account.key. A provider is available for the hour
// when it was up in more than half of the samples.
//
// When the node probes providers (prober), the probes are the signed
// challenge: a provider probed during the hour is available only if, in
// addition, more than half of its probes returned a receipt that verified
// against its registered machine.
type verdictLoop struct {
	v *Validator
	loop

	hour  uint64
	obs   map[peer.ID]*observation
	voted map[identity.MachineID]uint64 // last hour voted on, per machine
}

type observation struct {
	machine     identity.MachineID
	samples, up int
}

func newVerdictLoop(val *Validator) *verdictLoop {
	return &verdictLoop{v: val, obs: map[peer.ID]*observation{}, voted: map[identity.MachineID]uint64{}}
}

func (v *verdictLoop) Start(ctx context.Context) error {
	v.start(ctx, v.run)
	return nil
}

func (v *verdictLoop) run(ctx context.Context) {
	acct := v.v.d.Account
	started := false
	for {
		period := time.Second
		if ready := consensus.Ready(ctx, v.v.d.Chain); ready {
			params, err1 := v.v.d.Chain.Params(ctx)
			meta, err2 := v.v.d.Chain.Meta(ctx)
			if err1 == nil && err2 == nil {
				period = max(200*time.Millisecond, time.Duration(params.HourSeconds)*time.Second/20)
				cur := consensus.SLAHour(meta, params)
				if !started {
					v.hour, started = cur, true // the first hour is partial: observe it, do not vote on it
				} else if cur > v.hour {
					v.vote(ctx, acct, v.hour, cur > v.hour+1)
					v.hour, v.obs = cur, map[peer.ID]*observation{}
				}
				v.sample()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// sample records each registered provider's status once.
func (v *verdictLoop) sample() {
	for _, p := range v.v.d.Table.List() {
		pid, err := peer.Decode(p.PeerID)
		if err != nil || p.Registered == nil || !*p.Registered {
			continue
		}
		m, _ := identity.ParseMachineID(p.MachineID)
		o := v.obs[pid]
		if o == nil || o.machine != m {
			o = &observation{machine: m}
			v.obs[pid] = o
		}
		o.samples++
		if p.Status == router.StatusUp {
			o.up++
		}
	}
}

// vote submits the verdicts on hour; skipped means hours passed unseen
// (the loop was stalled), so nothing is known of the last one either.
func (v *verdictLoop) vote(ctx context.Context, acct Submitter, hour uint64, skipped bool) {
	if skipped {
		v.v.d.Log.Warn("chain: SLA hours passed without observation; no verdicts", "hour", hour)
		return
	}
	var probes map[identity.MachineID]probeTally
	if v.v.prober != nil {
		probes = v.v.prober.take()
	}
	for pid, o := range v.obs {
		if last, ok := v.voted[o.machine]; ok && last >= hour {
			continue
		}
		avail := 2*o.up > o.samples
		if pt, probed := probes[o.machine]; probed && pt.total > 0 {
			avail = avail && 2*pt.ok > pt.total
		}
		res, err := acct.Submit(ctx, &ledger.SLAVerdict{MachineID: o.machine, Hour: hour, Available: avail})
		if err != nil {
			v.v.d.Log.Warn("chain: SLA verdict not committed", "machine", o.machine, "peer", pid, "hour", hour, "err", err)
			continue
		}
		v.voted[o.machine] = hour
		v.v.d.Log.Info("chain: SLA verdict", "machine", o.machine, "hour", hour, "available", avail,
			"up_samples", o.up, "samples", o.samples, "height", res.Height)
	}
}

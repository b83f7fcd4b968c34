package provider

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/expert"
)

// Discovery of holders through the DHT: announcements carry what a
// holder holds, at what price, under which machine, but reach only nodes
// in the announce topic's mesh. For every expert with fewer than
// wantHolders holders in the table, the serving provider looks its DHT key
// up and connects to the holders found; the holder, seeing a new peer
// join its announce topic, announces within a few seconds.
const (
	wantHolders       = 2
	discoverInterval  = 30 * time.Second
	discoverFirst     = 2 * time.Second
	discoverPerLookup = 8
)

// discover runs until ctx ends for one model of layers × experts.
func (r *remoteExperts) discover(ctx context.Context, model [32]byte, layers, experts int) {
	t := r.p.d.Clock.Timer(discoverFirst)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.discoverOnce(ctx, model, layers, experts)
		t.Reset(discoverInterval)
	}
}

func (r *remoteExperts) discoverOnce(ctx context.Context, model [32]byte, layers, experts int) {
	h := r.p.d.Host
	tried := map[peer.ID]bool{}
	for l := range layers {
		for e := range experts {
			if ctx.Err() != nil || len(r.table.Holders(model, l, e)) >= wantHolders {
				continue
			}
			found, err := h.FindModelProviders(ctx, expert.Key(model, uint32(l), uint32(e)), discoverPerLookup)
			if err != nil {
				r.p.d.Log.Debug("find expert holders", "layer", l, "expert", e, "err", err)
				continue
			}
			for _, ai := range found {
				if tried[ai.ID] || ai.ID == h.ID() {
					continue
				}
				tried[ai.ID] = true
				if err := h.Host().Connect(ctx, ai); err != nil {
					r.p.d.Log.Debug("connect to expert holder", "holder", ai.ID, "err", err)
				}
			}
		}
	}
}

package scale

import (
	"context"
	"testing"
	"time"
)

// TestSmallMarketConverges is the make-test smoke run of the harness: 20
// providers, 2 gateways and a validator converge (every node sees every
// provider up, and so does a newcomer), heartbeats flow at the protocol's
// rate, and every figure the command prints is filled.
func TestSmallMarketConverges(t *testing.T) {
	pool, err := NewPool()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	cfg := Defaults(20)
	cfg.Validators = 1
	cfg.Measure = 3 * time.Second
	cfg.AnnounceInterval = 2 * time.Second
	cfg.ProbeInterval = 2 * time.Second
	cfg.DHTPeers = 8
	cfg.QuoteRounds = 10
	cfg.Converge = 60 * time.Second
	res, err := Run(context.Background(), pool, cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Down != 0 {
		t.Fatalf("%d (node, provider) pairs down at the end of the window", res.Down)
	}
	// 20 providers beat every 2 s: 10 validated heartbeats a second per
	// node, give or take the window's edges.
	if hb := res.PerNode["heartbeat"].Validated; hb < 5 || hb > 15 {
		t.Fatalf("%.1f heartbeats validated per second per node, want about 10", hb)
	}
	if res.PerNode["heartbeat"].Bytes <= 0 || res.PerNode["heartbeat"].ValidationCPU <= 0 {
		t.Fatalf("heartbeat figures empty: %+v", res.PerNode["heartbeat"])
	}
	if res.ObsPublished <= 0 || res.PerNode["price-obs"].Validated <= 0 {
		t.Fatalf("no price observations: published %.1f/s, validated %+v", res.ObsPublished, res.PerNode["price-obs"])
	}
	if res.Newcomer <= 0 || res.Candidates != 20 || res.QuoteMean <= 0 || res.TableBytes <= 0 || res.Heartbeat <= 0 {
		t.Fatalf("figures missing: newcomer %s, candidates %d, quote %s, table %d B, heartbeat %s",
			res.Newcomer, res.Candidates, res.QuoteMean, res.TableBytes, res.Heartbeat)
	}
	if res.DHTErr != "" || res.DHTFirst <= 0 {
		t.Fatalf("dht lookup: %q after %s", res.DHTErr, res.DHTFirst)
	}
}

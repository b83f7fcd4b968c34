package consensus_test

import (
	"context"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// TestWatchdogRedialsAndReportsStall: a follower whose only peer is
// dropped in a way CometBFT never redials gets it back through the
// watchdog and catches up; with its validator down, the follower reports
// its chain stalled, and recovers when the validator returns.
func TestWatchdogRedialsAndReportsStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{Validators: 1,
		WatchInterval: 100 * time.Millisecond, StallAfter: time.Second})
	f, err := net.StartFollower(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	waitHealth(ctx, t, f, "connected and advancing", func(h consensus.Health) bool { return h.Peers == 1 && !h.Stalled })

	if n := f.DropPeersGracefully(); n != 1 {
		t.Fatalf("dropped %d peers, want 1", n)
	}
	target := net.MaxHeight() + 3
	waitHealth(ctx, t, f, "redialled", func(h consensus.Health) bool { return h.Redials >= 1 && h.Peers == 1 })
	for f.App().Height() < target {
		select {
		case <-ctx.Done():
			t.Fatalf("follower at height %d after the redial, validator at %d", f.App().Height(), net.MaxHeight())
		case <-time.After(20 * time.Millisecond):
		}
	}

	if err := net.StopNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	waitHealth(ctx, t, f, "stalled with its peer missing", func(h consensus.Health) bool {
		return h.Stalled && h.Peers == 0 && h.Missing == 1
	})
	if err := net.StartNode(ctx, 0); err != nil {
		t.Fatal(err)
	}
	waitHealth(ctx, t, f, "recovered", func(h consensus.Health) bool { return !h.Stalled && h.Peers == 1 })
	target = net.MaxHeight()
	waitHealth(ctx, t, f, "caught up after the restart", func(h consensus.Health) bool { return h.Height >= target })
}

func waitHealth(ctx context.Context, t *testing.T, n *consensus.Node, what string, ok func(consensus.Health) bool) consensus.Health {
	t.Helper()
	for {
		h := n.Health()
		if ok(h) {
			return h
		}
		select {
		case <-ctx.Done():
			t.Fatalf("follower never %s: %+v", what, h)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

package testnet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// BenchmarkJoin measures how long a new node takes to catch up with a
// 3-validator chain (timeout_commit 10ms) at the height
// TENZRO_JOIN_HEIGHT (default 1000), whose state holds 200 funded
// accounts: by replaying every block from genesis, and by state sync from
// the newest snapshot (taken every height/4 blocks) then block sync. The
// state sync figure includes CometBFT's 5 s of snapshot discovery.
// scripts/bench-join runs it at several heights.
func BenchmarkJoin(b *testing.B) {
	height := int64(1000)
	if s := os.Getenv("TENZRO_JOIN_HEIGHT"); s != "" {
		h, err := strconv.ParseInt(s, 10, 64)
		if err != nil || h < 40 {
			b.Fatalf("TENZRO_JOIN_HEIGHT=%q: want a height of at least 40", s)
		}
		height = h
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	rich := seedKey("bench-join")
	net, err := testnet.Start(ctx, b.TempDir(), testnet.Options{
		Validators: 3, BlockTime: 10 * time.Millisecond, SnapshotInterval: height / 4, SnapshotKeep: 8, RPC: true,
		Accounts: []ledger.GenesisAccount{{Account: ledgertest.Account(rich), Balance: 1 << 50}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer net.Stop(context.Background())
	s := newSender(net)
	var txs [][]byte
	for i := range 200 {
		to := ledgertest.Account(seedKey(fmt.Sprint("bench-join-", i)))
		txs = append(txs, s.Sign(b, rich, &ledger.Transfer{To: to, Amount: 1000}))
	}
	submit(ctx, b, net.Nodes[0], txs...)
	if err := net.WaitHeight(ctx, height); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var replay, stateSync time.Duration
	for i := range b.N {
		for _, mode := range []string{"replay", "statesync"} {
			home := filepath.Join(b.TempDir(), fmt.Sprint(mode, i))
			start := time.Now()
			nd, err := net.StartFollowerWith(ctx, home, func(c *consensus.Config) {
				if mode == "statesync" {
					c.StateSync = &consensus.StateSync{RPCServers: net.RPCServers}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			if mode == "replay" {
				replay += took
			} else {
				stateSync += took
				if p := nd.SyncProgress(ctx); !p.Restored {
					b.Fatalf("state sync join did not restore a snapshot: %+v", p)
				}
			}
			if err := nd.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(net.MaxHeight()), "height")
	b.ReportMetric(replay.Seconds()/float64(b.N), "s/join-replay")
	b.ReportMetric(stateSync.Seconds()/float64(b.N), "s/join-statesync")
}

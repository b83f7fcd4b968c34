package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"
	"time"
)

// testModel is a catalog model ID the test providers serve.
var testModel = sha256.Sum256([]byte("tenzro test model"))

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TENZRO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// testConfig returns a loopback config for role in a fresh home.
func testConfig(t *testing.T, role Role, backend string, bootstrap []string) Config {
	t.Helper()
	cfg := Default(role)
	cfg.Home = t.TempDir()
	cfg.Network = "test"
	cfg.API.Listen = "127.0.0.1:0"
	cfg.P2P.Listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	cfg.P2P.Bootstrap = bootstrap
	cfg.Identity.Backend = backend
	if role == RoleProvider {
		cfg.Provider.Region = "DE"
		cfg.Provider.AnnounceInterval = time.Second
		cfg.Provider.Models = []ModelConfig{{
			Name: "tiny", ID: hex.EncodeToString(testModel[:]), Engine: "embedded",
			Verification: []string{"none", "receipt"},
		}}
	}
	return cfg
}

// startNode assembles and starts a node, stopping it when the test ends.
func startNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := New(ctx, cfg, Options{Logger: testLogger()})
	if err != nil {
		t.Fatalf("new %s: %v", cfg.Role, err)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", cfg.Role, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Stop(ctx); err != nil {
			t.Errorf("stop %s: %v", cfg.Role, err)
		}
	})
	return n
}

// eventually polls cond every 100 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

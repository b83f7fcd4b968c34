package node

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/rpc"
)

// testModel is an ID no provider serves (for messages built by hand).
var testModel = sha256.Sum256([]byte("tenzro test model"))

// testModelDir is the one generated model every test provider serves.
func testModelDir(t testing.TB) (dir, id string) {
	t.Helper()
	return nodetest.SharedModel(t, EnsureDevnetModel)
}

func TestMain(m *testing.M) {
	slog.SetDefault(testLogger())
	code := m.Run()
	nodetest.CleanupShared()
	os.Exit(code)
}

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TENZRO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// testConfig returns a loopback config for role in a fresh home.
func testConfig(t testing.TB, role Role, backend string, bootstrap []string) Config {
	t.Helper()
	cfg := Default(role)
	cfg.Home = t.TempDir()
	cfg.Network = "test"
	cfg.API.Listen = "127.0.0.1:0"
	cfg.P2P.Listen = nodetest.LoopbackListen()
	cfg.P2P.Bootstrap = bootstrap
	cfg.Identity.Backend = backend
	if role == RoleProvider {
		cfg.Provider.Region = "DE"
		cfg.Provider.AnnounceInterval = time.Second
		dir, id := testModelDir(t)
		cfg.Provider.Models = []ModelConfig{DevnetModel(dir, id)}
		// Test gateways are not allowlisted: lift the unknown callers'
		// budget, which the abuse tests set back on purpose.
		cfg.Provider.UnknownConcurrency, cfg.Provider.UnknownRatePerMinute = 64, 1_000_000
	}
	return cfg
}

// newNode assembles a node; nothing runs until it is started.
func newNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	return newNodeWith(t, cfg, Options{Logger: testLogger()})
}

// newNodeWith assembles a node with assembly options o.
func newNodeWith(t testing.TB, cfg Config, o Options) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodetest.StartTimeout)
	defer cancel()
	n, err := New(ctx, cfg, o)
	if err != nil {
		t.Fatalf("new %s: %v", cfg.Role, err)
	}
	return n
}

// startNode assembles and starts a node, stopping it when the test ends.
func startNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	return nodetest.Start(t, string(cfg.Role), newNode(t, cfg))
}

// startNodeWith is startNode with assembly options o.
func startNodeWith(t testing.TB, cfg Config, o Options) *Node {
	t.Helper()
	return nodetest.Start(t, string(cfg.Role), newNodeWith(t, cfg, o))
}

// rpcCall runs one registered JSON-RPC method in-process.
func (n *Node) rpcCall(method, params string) (any, error) {
	h, ok := n.api.rpc.Handler(method)
	if !ok {
		return nil, fmt.Errorf("no method %s", method)
	}
	// As the test buyer: methods reading a buyer's own (its sessions)
	// check the bearer token.
	ctx := rpc.WithHeader(context.Background(), http.Header{"Authorization": {"Bearer " + testToken}})
	return h(ctx, json.RawMessage(params))
}

// TestNodeRunsOnce: a second Start, or a Start after Stop, is refused, and
// a second Stop does nothing.
func TestNodeRunsOnce(t *testing.T) {
	n := newNode(t, testConfig(t, RoleGateway, "software", nil))
	ctx := t.Context()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); !errors.Is(err, ErrRunning) {
		t.Fatalf("second start: %v, want ErrRunning", err)
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("start after stop: %v, want ErrStopped", err)
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

package node

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testModel is an ID no provider serves (for messages built by hand).
var testModel = sha256.Sum256([]byte("tenzro test model"))

// sharedModel is one generated model every test provider serves, made once
// per test binary.
var sharedModel struct {
	once    sync.Once
	dir, id string
	err     error
}

func testModelDir(t testing.TB) (dir, id string) {
	t.Helper()
	sharedModel.once.Do(func() {
		d, err := os.MkdirTemp("", "tenzro-node-test-model")
		if err != nil {
			sharedModel.err = err
			return
		}
		sharedModel.dir = filepath.Join(d, "model")
		sharedModel.id, sharedModel.err = EnsureDevnetModel(sharedModel.dir)
	})
	if sharedModel.err != nil {
		t.Fatal(sharedModel.err)
	}
	return sharedModel.dir, sharedModel.id
}

func TestMain(m *testing.M) {
	slog.SetDefault(testLogger())
	code := m.Run()
	if sharedModel.dir != "" {
		os.RemoveAll(filepath.Dir(sharedModel.dir))
	}
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
	cfg.P2P.Listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	cfg.P2P.Bootstrap = bootstrap
	cfg.Identity.Backend = backend
	if role == RoleProvider {
		cfg.Provider.Region = "DE"
		cfg.Provider.AnnounceInterval = time.Second
		dir, id := testModelDir(t)
		cfg.Provider.Models = []ModelConfig{DevnetModel(dir, id)}
	}
	return cfg
}

// startNode assembles and starts a node, stopping it when the test ends.
func startNode(t testing.TB, cfg Config) *Node {
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
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rpcCall runs one registered JSON-RPC method in-process.
func (n *Node) rpcCall(method, params string) (any, error) {
	h, ok := n.api.rpc.Handler(method)
	if !ok {
		return nil, fmt.Errorf("no method %s", method)
	}
	return h(context.Background(), json.RawMessage(params))
}

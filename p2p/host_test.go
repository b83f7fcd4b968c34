package p2p

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

func testTiming() timing {
	return timing{
		dialTimeout:       400 * time.Millisecond,
		retryInterval:     150 * time.Millisecond,
		maxBackoff:        time.Second,
		reprovideInterval: 5 * time.Second,
		opTimeout:         10 * time.Second,
	}
}

// tlogWriter sends log lines to t.Log so they show up with -v or on failure.
type tlogWriter struct{ t *testing.T }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func testConfig(t *testing.T, server bool, bootstrap []string) Config {
	cfg := DefaultConfig()
	cfg.Network = "test"
	cfg.Listen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	cfg.KeyFile = filepath.Join(t.TempDir(), "p2p.key")
	cfg.DHTServer = server
	cfg.Bootstrap = bootstrap
	return cfg
}

// newTestHost builds (but does not start) a host on 127.0.0.1 that is
// stopped when the test ends.
func newTestHost(t *testing.T, cfg Config, opts ...Option) *Host {
	t.Helper()
	opts = append([]Option{withTiming(testTiming()), WithLogger(testLogger(t))}, opts...)
	h, err := New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return h
}

// blockPeer is a connection gater refusing every connection to or from one
// peer, counting the refused outbound dials.
type blockPeer struct {
	id      peer.ID
	refused atomic.Int32
}

func (g *blockPeer) InterceptPeerDial(p peer.ID) bool {
	if p == g.id {
		g.refused.Add(1)
		return false
	}
	return true
}
func (g *blockPeer) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return p != g.id }
func (g *blockPeer) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (g *blockPeer) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return p != g.id
}
func (g *blockPeer) InterceptUpgraded(c network.Conn) (bool, control.DisconnectReason) {
	return c.RemotePeer() != g.id, 0
}

func TestFiveHostModelDiscovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()

	h0 := newTestHost(t, testConfig(t, true, nil))
	if err := h0.Start(ctx); err != nil {
		t.Fatal(err)
	}
	boot := h0.Addrs()
	for _, a := range boot {
		if !strings.HasSuffix(a, "/p2p/"+h0.ID().String()) {
			t.Fatalf("Addrs() entry %q lacks /p2p/%s", a, h0.ID())
		}
	}
	h1 := newTestHost(t, testConfig(t, true, boot))
	h2 := newTestHost(t, testConfig(t, true, boot))
	h3 := newTestHost(t, testConfig(t, true, boot))
	// Host 4 is a client (laptop) that can never connect to host 1: it must
	// learn of host 1 from the provider records other peers hold.
	gate := &blockPeer{id: h1.ID()}
	h4 := newTestHost(t, testConfig(t, false, boot), withLibp2pOptions(libp2p.ConnectionGater(gate)))
	hosts := []*Host{h1, h2, h3, h4}
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Start(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()

	model := sha256.Sum256([]byte("tiny-test-model"))
	start := time.Now()
	if err := h1.ProvideModel(ctx, model); err != nil {
		t.Fatalf("ProvideModel: %v", err)
	}
	t.Logf("ProvideModel took %v", time.Since(start))

	// ADD_PROVIDER is fire-and-forget in Kademlia: Provide returns once the
	// messages are sent, and the holders store them a moment later.
	provs := findEventually(t, ctx, h4, model, 5, h1.ID())
	i := slices.IndexFunc(provs, func(ai peer.AddrInfo) bool { return ai.ID == h1.ID() })
	if !slices.ContainsFunc(provs[i].Addrs, func(a ma.Multiaddr) bool { return strings.HasPrefix(a.String(), "/ip4/127.0.0.1/") }) {
		t.Fatalf("provider record for host 1 lacks its loopback address: %v", provs[i].Addrs)
	}
	if c := h4.Host().Network().Connectedness(h1.ID()); c == network.Connected {
		t.Fatal("host 4 is connected to host 1; the gater should have prevented it")
	}
	t.Logf("host 4 refused %d dials to host 1", gate.refused.Load())

	// A provider never finds itself; other servers find host 1 too.
	self, err := h1.FindModelProviders(ctx, model, 5)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(self, func(ai peer.AddrInfo) bool { return ai.ID == h1.ID() }) {
		t.Fatal("FindModelProviders returned the caller itself")
	}
	if other := findEventually(t, ctx, h3, model, 1, h1.ID()); len(other) != 1 {
		t.Fatalf("host 3 FindModelProviders(max 1) = %v; want exactly host 1", other)
	}

	// An unknown model has no providers; the lookup ends without error.
	none, err := h2.FindModelProviders(ctx, sha256.Sum256([]byte("nobody serves this")), 5)
	if err != nil || len(none) != 0 {
		t.Fatalf("unknown model: providers %v, err %v", none, err)
	}

	// Host 0 sees the others, with identify data: servers speak the DHT
	// protocol, the client does not.
	// Identify on host 0's side runs asynchronously, hence the retries.
	kad := "/tenzro/test/kad/1.0.0"
	var problem string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		problem = checkPeers(h0.Peers(), hosts, h4, kad)
		if problem == "" || time.Now().After(deadline) {
			break
		}
	}
	if problem != "" {
		t.Fatal(problem)
	}
}

// findEventually polls FindModelProviders until want is among the results.
func findEventually(t *testing.T, ctx context.Context, h *Host, model [32]byte, max int, want peer.ID) []peer.AddrInfo {
	t.Helper()
	start := time.Now()
	for attempt := 1; ; attempt++ {
		provs, err := h.FindModelProviders(ctx, model, max)
		if err != nil {
			t.Fatalf("FindModelProviders: %v", err)
		}
		if slices.ContainsFunc(provs, func(ai peer.AddrInfo) bool { return ai.ID == want }) {
			t.Logf("found %s after %v (%d lookups): %v", want, time.Since(start), attempt, provs)
			return provs
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s not found among providers %v after %d lookups in 5s", want, provs, attempt)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// checkPeers describes the first way peers (host 0's view) is wrong.
func checkPeers(peers []PeerInfo, hosts []*Host, client *Host, kad string) string {
	byID := make(map[peer.ID]PeerInfo)
	for _, p := range peers {
		byID[p.ID] = p
	}
	for _, h := range hosts {
		p, ok := byID[h.ID()]
		if !ok {
			return fmt.Sprintf("host 0 Peers() lacks %s: %+v", h.ID(), peers)
		}
		if p.Direction != "inbound" || len(p.Addrs) == 0 || p.AgentVersion != UserAgent {
			return fmt.Sprintf("host 0 PeerInfo for %s = %+v", h.ID(), p)
		}
		if got, want := slices.Contains(p.Protocols, kad), h != client; got != want {
			return fmt.Sprintf("peer %s lists %s: %v, want %v (protocols %v)", h.ID(), kad, got, want, p.Protocols)
		}
	}
	return ""
}

func TestLifecycleErrors(t *testing.T) {
	h := newTestHost(t, testConfig(t, false, nil))
	if err := h.ProvideModel(context.Background(), [32]byte{}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("ProvideModel before Start = %v, want ErrNotStarted", err)
	}
	if _, err := h.FindModelProviders(context.Background(), [32]byte{}, 1); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("FindModelProviders before Start = %v, want ErrNotStarted", err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err == nil {
		t.Fatal("second Start succeeded")
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop = %v, want nil", err)
	}
	if err := h.Start(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after Stop = %v, want ErrStopped", err)
	}
	if _, err := h.FindModelProviders(context.Background(), [32]byte{}, 1); !errors.Is(err, ErrStopped) {
		t.Fatalf("FindModelProviders after Stop = %v, want ErrStopped", err)
	}
}

func TestNewKeyHandling(t *testing.T) {
	cfg := testConfig(t, false, nil)
	h1 := newTestHost(t, cfg)
	id1 := h1.ID()
	if err := h1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	fileID, err := PeerIDFromKeyFile(cfg.KeyFile)
	if err != nil || fileID != id1 {
		t.Fatalf("PeerIDFromKeyFile = %s, %v; want the host's %s", fileID, err, id1)
	}
	h2 := newTestHost(t, cfg)
	if h2.ID() != id1 {
		t.Fatalf("restarted host has peer ID %s, want %s", h2.ID(), id1)
	}

	// WithKey wins over the key file and a bootstrap entry naming ourselves
	// is dropped.
	k, _, _ := crypto.GenerateEd25519Key(nil)
	kid, _ := peer.IDFromPrivateKey(k)
	cfg2 := testConfig(t, false, []string{"/ip4/127.0.0.1/tcp/1/p2p/" + kid.String(), "/ip4/127.0.0.1/tcp/2/p2p/" + testPeer})
	h3 := newTestHost(t, cfg2, withKey(k))
	if h3.ID() != kid {
		t.Fatalf("WithKey host ID %s, want %s", h3.ID(), kid)
	}
	if _, err := os.Stat(cfg2.KeyFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WithKey host touched its key file: %v", err)
	}
	if len(h3.bootstrap) != 1 || h3.bootstrap[0].ID.String() != testPeer {
		t.Fatalf("bootstrap list %v, want only %s", h3.bootstrap, testPeer)
	}

	cfg3 := testConfig(t, false, nil)
	cfg3.KeyFile = ""
	if _, err := New(context.Background(), cfg3); err == nil || !strings.Contains(err.Error(), "p2p.key_file") {
		t.Fatalf("New without a key = %v, want a p2p.key_file error", err)
	}
	cfg3.Network = "Bad"
	if _, err := New(context.Background(), cfg3); err == nil || !strings.Contains(err.Error(), "p2p.network") {
		t.Fatalf("New with a bad config = %v, want a p2p.network error", err)
	}
}

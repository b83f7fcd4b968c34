package p2p

import (
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// blackhole accepts TCP connections and never answers, like a bootstrap
// address whose process hangs: a dial only ends at its timeout.
func blackhole(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), accepted
}

func TestDeadBootstrapDoesNotBlockStart(t *testing.T) {
	hole, accepted := blackhole(t)
	host, port, _ := net.SplitHostPort(hole)
	deadKey, _, _ := crypto.GenerateEd25519Key(nil)
	deadID, _ := peer.IDFromPrivateKey(deadKey)
	cfg := testConfig(t, true, []string{"/ip4/" + host + "/tcp/" + port + "/p2p/" + deadID.String()})
	h := newTestHost(t, cfg)

	start := time.Now()
	if err := h.Start(context.Background()); err != nil {
		t.Fatalf("Start with a dead bootstrap peer: %v", err)
	}
	took := time.Since(start)
	if limit := testTiming().dialTimeout + time.Second; took > limit {
		t.Fatalf("Start took %v with a black-holed bootstrap peer, want < %v", took, limit)
	}
	if accepted.Load() == 0 {
		t.Fatal("Start never dialled the bootstrap address")
	}
	if n := len(h.Peers()); n != 0 {
		t.Fatalf("Peers() = %d entries, want none", n)
	}
}

// freePort returns a loopback TCP port reserved for this test binary.
func freePort(t *testing.T) string {
	t.Helper()
	p, err := freeport.TCP()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(p)
}

// A node started before its bootstrap peer keeps retrying, joins once the
// peer is up, and announces the model it failed to provide while alone.
func TestLateBootstrapPeerAndProvideRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	port := freePort(t)
	bootKey, _, _ := crypto.GenerateEd25519Key(nil)
	bootID, _ := peer.IDFromPrivateKey(bootKey)

	early := newTestHost(t, testConfig(t, true, []string{"/ip4/127.0.0.1/tcp/" + port + "/p2p/" + bootID.String()}))
	if err := early.Start(ctx); err != nil {
		t.Fatalf("Start with an absent bootstrap peer: %v", err)
	}
	model := sha256.Sum256([]byte("provided while alone"))
	shortCtx, shortCancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := early.ProvideModel(shortCtx, model)
	shortCancel()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "routing table") {
		t.Fatalf("ProvideModel while isolated = %v, want a routing table deadline error", err)
	}

	// The bootstrap peer comes up on the address the early node keeps dialling.
	bootCfg := testConfig(t, true, nil)
	bootCfg.Listen = []string{"/ip4/127.0.0.1/tcp/" + port}
	boot := newTestHost(t, bootCfg, withKey(bootKey))
	if err := boot.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for early.Host().Network().Connectedness(bootID) != network.Connected {
		// Retries run every 150 ms here; without clearing libp2p's dial
		// back-off (5 s after the first refused dial) this would take 5 s.
		if time.Since(start) > 2*time.Second {
			t.Fatal("early node did not reconnect to its bootstrap peer within 2s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("reconnected after %v", time.Since(start))

	// The background loop re-announces the model; the bootstrap peer then
	// holds the provider record.
	for {
		provs, err := boot.FindModelProviders(ctx, model, 1)
		if err != nil {
			t.Fatalf("FindModelProviders: %v", err)
		}
		if len(provs) == 1 && provs[0].ID == early.ID() {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("model not re-provided 10s after reconnecting; providers %v", provs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("re-provided and found after %v", time.Since(start))
}

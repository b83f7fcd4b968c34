package payment

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const testNetwork = "paytest"

// newHost returns a libp2p host on loopback TCP, closed at cleanup.
func newHost(t testing.TB) host.Host {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// connect dials server from client.
func connect(t testing.TB, client, server host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Connect(ctx, peer.AddrInfo{ID: server.ID(), Addrs: server.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// newPair returns two connected hosts.
func newPair(t testing.TB) (client, server host.Host) {
	client, server = newHost(t), newHost(t)
	connect(t, client, server)
	return client, server
}

// serve starts a payment server with sink on h, stopped at cleanup.
func serve(t testing.TB, h host.Host, cfg ServerConfig, sink Sink) *Server {
	t.Helper()
	if cfg.Network == "" {
		cfg.Network = testNetwork
	}
	srv, err := NewServer(h, cfg, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// records returns n records signed by a fresh settler, each with its own
// request digest (its index in the first 8 bytes) and a receipt of
// receiptLen random bytes.
func records(t testing.TB, n, receiptLen int) []receipt.PaymentRecord {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]receipt.PaymentRecord, n)
	for i := range out {
		r := &out[i]
		r.Payer, r.Provider = terms.AccountID{0xaa}, [32]byte{0xbb}
		binary.BigEndian.PutUint64(r.RequestDigest[:], uint64(i))
		r.QuoteDigest = terms.Hash32{0xcc}
		r.Price, r.Units, r.Time, r.ExpiryHeight = uint64(100+i), uint64(10+i), 1_700_000_000, 1<<40
		r.Receipt = make([]byte, receiptLen)
		_, _ = rand.Read(r.Receipt)
		r.ReceiptHash = sha256.Sum256(r.Receipt)
		if err := receipt.SignRecord(priv, "paytest-chain", r); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// index is a record's position as records numbered it.
func index(r *receipt.PaymentRecord) int { return int(binary.BigEndian.Uint64(r.RequestDigest[:8])) }

// recordingSink persists records in memory, keyed by request digest, and
// answers each by the verdict function when set (nil: accept).
type recordingSink struct {
	verdict func(ctx context.Context, rec *receipt.PaymentRecord) error

	mu    sync.Mutex
	got   map[terms.Hash32]receipt.PaymentRecord
	from  map[peer.ID]int
	calls int
}

func newSink(verdict func(context.Context, *receipt.PaymentRecord) error) *recordingSink {
	return &recordingSink{verdict: verdict, got: map[terms.Hash32]receipt.PaymentRecord{}, from: map[peer.ID]int{}}
}

func (s *recordingSink) Accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.verdict != nil {
		if err := s.verdict(ctx, rec); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[rec.RequestDigest] = *rec
	s.from[from]++
	return nil
}

func (s *recordingSink) count() (persisted, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got), s.calls
}

// rawStream opens a payment stream to server, writes b as it is and
// reports how the stream ended: the ack frame's bytes, or the read error.
func rawStream(t *testing.T, client host.Host, server peer.ID, b []byte) ([]byte, error) {
	t.Helper()
	s := p2ptest.Stream(t, client, server, ProtocolID)
	defer func() { _ = s.Reset() }()
	if _, err := s.Write(b); err != nil {
		return nil, err
	}
	_ = s.CloseWrite()
	return p2p.ReadFrame(bufio.NewReader(s), MaxAckSize)
}

// wantReset asserts the stream ended without an ack, by a reset rather
// than a clean close or a timeout.
func wantReset(t *testing.T, ack []byte, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got an ack %x, want the stream reset", ack)
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		t.Fatalf("stream timed out (%v), want it reset at once", err)
	}
}

// frameOf frames payload as p2p.WriteFrame does.
func frameOf(payload []byte) []byte { return p2p.AppendFrame(nil, payload) }

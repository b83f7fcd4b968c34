package expert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// holdsTwo holds only expert 2 of layer 1.
type holdsTwo struct{ scaleComputer }

func (h holdsTwo) Compute(ctx context.Context, m [32]byte, layer, expert int, rows [][]float32) ([][]float32, error) {
	if layer != 1 || expert != 2 {
		return nil, fmt.Errorf("%w: layer %d expert %d", ErrNotHeld, layer, expert)
	}
	return h.scaleComputer.Compute(ctx, m, layer, expert, rows)
}

func exchangeOne(t *testing.T, c host.Host, p peer.ID, req *Request) (*Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, _, err := Exchange(ctx, c, p, req)
	return resp, err
}

func TestServerAnswersAndRefuses(t *testing.T) {
	c := newHost(t, nil)
	h := startHolder(t, c, holdsTwo{})
	req := sampleRequest(t)
	req.Batches = req.Batches[1:] // expert 2 only
	resp, err := exchangeOne(t, c, h.peer, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Verify(nil, resp.Receipt, h.machine(), h.peer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := Match(r, req, resp.Outputs); err != nil {
		t.Fatal(err)
	}
	rows, _ := UnpackRows(resp.Outputs[0], 4)
	if rows[1][1] != 0.5*3+1 {
		t.Fatalf("row computed as %v", rows[1])
	}
	if _, err := Verify(nil, resp.Receipt, h.machine(), c.ID(), time.Now()); !errors.Is(err, ErrWrongSigner) {
		t.Fatalf("receipt verified for another peer: %v", err)
	}

	full := sampleRequest(t) // expert 0 is not held
	if _, err := exchangeOne(t, c, h.peer, full); !errors.Is(err, ErrRefused) {
		t.Fatalf("request for an expert not held: %v", err)
	}
	wrong := sampleRequest(t)
	wrong.Network = "elsewhere"
	resp, err = exchangeOne(t, c, h.peer, wrong)
	if !errors.Is(err, ErrRefused) || resp.Code != CodeWrongNetwork {
		t.Fatalf("request of another network: %v", err)
	}
	if st := h.srv.Stats(); st.Exchanges != 1 || st.Refused != 2 || st.Rows != 2 {
		t.Fatalf("server stats %+v", st)
	}
}

func TestServerResetsMalformedAndOversized(t *testing.T) {
	c := newHost(t, nil)
	h := startHolder(t, c, scaleComputer{})
	bad := sampleRequest(t)
	bad.Batches[0].Rows = bad.Batches[0].Rows[:8] // half a row
	b, err := encode(bad, MaxRequestSize)
	if err != nil {
		t.Fatal(err)
	}
	for name, frame := range map[string][]byte{
		"malformed": p2p.AppendFrame(nil, b),
		// Only the length prefix of a frame above the limit (16 MiB).
		"oversized": {0x80, 0x80, 0x80, 0x08},
	} {
		s, err := c.NewStream(context.Background(), h.peer, ProtocolID)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = s.Write(frame)
		_ = s.CloseWrite()
		if got, err := p2p.ReadFrame(bufio.NewReader(s), MaxResponseSize); err == nil {
			t.Fatalf("%s request answered %x, want the stream reset", name, got)
		}
		_ = s.Reset()
	}
	deadline := time.Now().Add(2 * time.Second)
	for h.srv.Stats().Reset < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := h.srv.Stats(); st.Reset != 2 || st.Exchanges != 0 {
		t.Fatalf("server stats %+v, want 2 resets", st)
	}
}

func TestServerPerPeerLimit(t *testing.T) {
	c := newHost(t, nil)
	hi := newHolderIdentity(t)
	hh := newHost(t, hi.key)
	p2ptest.Connect(t, c, hh)
	block := make(chan struct{})
	srv, err := NewServer(hh, ServerConfig{Network: testNetwork, Limits: p2p.Limits{MaxPerPeer: 1}}, blockingComputer{block},
		func() (*identity.Session, error) { return hi.sess, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	first := make(chan error, 1)
	go func() {
		_, err := exchangeOne(t, c, hi.peer, sampleRequest(t))
		first <- err
	}()
	// The first exchange holds the peer's only slot until block closes.
	for srv.life.Active() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := exchangeOne(t, c, hi.peer, sampleRequest(t)); err == nil {
		t.Fatal("second exchange beyond the per-peer limit was answered")
	}
	close(block)
	if err := <-first; err != nil {
		t.Fatalf("first exchange: %v", err)
	}
}

// blockingComputer computes once block is closed.
type blockingComputer struct{ block chan struct{} }

func (b blockingComputer) Compute(ctx context.Context, m [32]byte, layer, expert int, rows [][]float32) ([][]float32, error) {
	<-b.block
	return scaleComputer{}.Compute(ctx, m, layer, expert, rows)
}

// TestKnownCertLeftOut: a caller naming the holder's current certificate
// gets the receipt without it, which verifies once put back; naming
// another certificate gets it in full.
func TestKnownCertLeftOut(t *testing.T) {
	c := newHost(t, nil)
	h := startHolder(t, c, scaleComputer{})
	full, err := exchangeOne(t, c, h.peer, sampleRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	hash := h.sess.Cert.Hash()
	req := sampleRequest(t)
	req.KnownCert = hash[:]
	short, err := exchangeOne(t, c, h.peer, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(short.Receipt)+4000 > len(full.Receipt) {
		t.Fatalf("receipt of %d bytes with the certificate known, %d without", len(short.Receipt), len(full.Receipt))
	}
	if _, err := Verify(nil, short.Receipt, h.machine(), h.peer, time.Now()); err == nil {
		t.Fatal("a receipt without its certificate verified")
	}
	back, filled, err := withCert(short.Receipt, &h.sess.Cert)
	if err != nil || !filled {
		t.Fatalf("certificate put back: %v, %v", filled, err)
	}
	r, err := Verify(nil, back, h.machine(), h.peer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := Match(r, req, short.Outputs); err != nil {
		t.Fatal(err)
	}
	req.KnownCert = make([]byte, 32)
	other, err := exchangeOne(t, c, h.peer, req)
	if err != nil || len(other.Receipt) < len(full.Receipt)-64 {
		t.Fatalf("another certificate named: receipt of %d bytes (%v), want it in full", len(other.Receipt), err)
	}
}

package sessioncache_test

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func serveSuccessor(t *testing.T, cfg sessioncache.ServerConfig) (*successor, host.Host, host.Host, *sessioncache.Server) {
	t.Helper()
	s := newSuccessor(t, nil)
	sh := s.host(t)
	ch := newMachine(t).host(t)
	p2ptest.Connect(t, ch, sh)
	srv, err := sessioncache.NewServer(sh, s.hold, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return s, ch, sh, srv
}

func open(t *testing.T, from, to host.Host) network.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := from.NewStream(ctx, to.ID(), sessioncache.ProtocolID)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.SetDeadline(time.Now().Add(5 * time.Second))
	return st
}

// answered reports whether the server wrote an answer frame (false: it
// reset the stream).
func answered(st network.Stream) bool {
	_, err := p2p.ReadFrame(bufio.NewReader(st), sessioncache.MaxFrameSize)
	return err == nil
}

// TestServerResetsBadFrames: a frame that is not a request, or one over
// the size cap, is answered by a reset; the malformed one is counted.
func TestServerResetsBadFrames(t *testing.T) {
	s, ch, sh, _ := serveSuccessor(t, sessioncache.ServerConfig{})
	st := open(t, ch, sh)
	if err := p2p.WriteFrame(st, []byte{0xa0}); err != nil {
		t.Fatal(err)
	}
	_ = st.CloseWrite()
	if answered(st) {
		t.Fatal("an empty request was answered")
	}
	if v := value(s.met.Rejected.WithLabelValues(sessioncache.ReasonMalformed)); v != 1 {
		t.Fatalf("malformed counted %v times", v)
	}
	big := open(t, ch, sh)
	// Only the length prefix: the server refuses before reading a byte
	// of the payload.
	hdr := p2p.AppendFrame(nil, nil)[:0]
	hdr = append(hdr, 0x81, 0x80, 0x80, 0x01) // uvarint 2 MiB + 1
	if _, err := big.Write(hdr); err != nil {
		t.Fatal(err)
	}
	if answered(big) {
		t.Fatal("an oversized frame was answered")
	}
}

// TestServerPerPeerLimit: a peer's streams beyond MaxPerPeer are reset
// before they are read.
func TestServerPerPeerLimit(t *testing.T) {
	_, ch, sh, srv := serveSuccessor(t, sessioncache.ServerConfig{Limits: p2p.Limits{MaxPerPeer: 1, Timeout: 5 * time.Second}})
	first := open(t, ch, sh)
	if _, err := first.Write([]byte{0x05}); err != nil { // a frame that never completes
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); srv.Active() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the server never took the first stream")
		}
		time.Sleep(time.Millisecond)
	}
	// A request the server would answer (an unknown session) if it were
	// admitted.
	challenge, _ := cborx.Marshal(&sessioncache.Request{Challenge: &sessioncache.ChallengeRequest{SessionID: "x", Nonce: make([]byte, 16)}})
	second := open(t, ch, sh)
	_ = p2p.WriteFrame(second, challenge)
	_ = second.CloseWrite()
	if _, err := io.ReadAll(second); err == nil {
		t.Fatal("a second stream over the per-peer limit was not reset")
	}
	_ = first.Reset()
	third := open(t, ch, sh)
	for deadline := time.Now().Add(5 * time.Second); srv.Active() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first stream's slot was never freed")
		}
		time.Sleep(time.Millisecond)
	}
	_ = p2p.WriteFrame(third, challenge)
	_ = third.CloseWrite()
	if !answered(third) {
		t.Fatal("a stream within the limit was not answered")
	}
}

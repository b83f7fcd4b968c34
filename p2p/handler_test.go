package p2p

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// servePair is a server host and a client host on loopback, connected,
// with the production resource manager and the tenzro service limits.
func servePair(t *testing.T) (srv, cli host.Host) {
	t.Helper()
	s := newTestHost(t, testConfig(t, false, nil))
	c := newTestHost(t, testConfig(t, false, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Host().Connect(ctx, peer.AddrInfo{ID: s.ID(), Addrs: s.Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	return s.Host(), c.Host()
}

// exchange opens a stream of proto, writes raw (closing its side when
// closeWrite) and reads the stream to its end: an error is a reset.
func exchange(t *testing.T, cli host.Host, to peer.ID, proto protocol.ID, raw []byte, closeWrite bool) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := cli.NewStream(ctx, to, proto)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Reset() }()
	_ = st.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := st.Write(raw); err != nil {
		return nil, err
	}
	if closeWrite {
		_ = st.CloseWrite()
	}
	return io.ReadAll(st)
}

func frame(payload []byte) []byte { return AppendFrame(nil, payload) }

// echo answers the request frame with itself.
func echo(st *Stream) error {
	b, err := st.ReadFrame()
	if err != nil {
		return err
	}
	return WriteFrame(st, b)
}

// TestServe: the opening closes an answered stream and resets (and
// counts) one whose admission, memory or deadline fails, or whose
// handler panics (counted by protocol); the server keeps serving.
func TestServe(t *testing.T) {
	srv, cli := servePair(t)
	reg := prometheus.NewRegistry()
	var resets atomic.Int32
	spec := func(proto protocol.ID) StreamSpec {
		return StreamSpec{Protocol: proto, Service: ServicePayment, MaxFrame: 1 << 10, Reserve: 2,
			ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
			OnReset: func() { resets.Add(1) }, Registerer: reg}
	}
	wantReset := func(t *testing.T, proto protocol.ID, raw []byte, closeWrite bool, n int32) {
		t.Helper()
		before := resets.Load()
		if b, err := exchange(t, cli, srv.ID(), proto, raw, closeWrite); err == nil {
			t.Fatalf("stream ended cleanly with %q, want a reset", b)
		}
		if got := resets.Load() - before; got != n {
			t.Fatalf("%d resets counted, want %d", got, n)
		}
	}

	t.Run("answered", func(t *testing.T) {
		const proto = "/tenzro/test-serve-ok/1.0.0"
		srv.SetStreamHandler(proto, Serve(spec(proto), echo))
		before := resets.Load()
		b, err := exchange(t, cli, srv.ID(), proto, frame([]byte("hello")), true)
		if err != nil || string(b) != string(frame([]byte("hello"))) {
			t.Fatalf("answer %q %v, want the echoed frame and a close", b, err)
		}
		if resets.Load() != before {
			t.Fatal("an answered stream was counted as reset")
		}
	})

	t.Run("decoded", func(t *testing.T) {
		const proto = "/tenzro/test-serve-decode/1.0.0"
		srv.SetStreamHandler(proto, Serve(spec(proto), func(st *Stream) error {
			n, err := DecodeFrame(st, func(b []byte) (int, error) {
				if string(b) == "bad" {
					return 0, errors.New("malformed")
				}
				return len(b), nil
			})
			if err != nil {
				return err
			}
			return WriteFrame(st, []byte{byte(n)})
		}))
		b, err := exchange(t, cli, srv.ID(), proto, frame([]byte("four")), true)
		if err != nil || string(b) != string(frame([]byte{4})) {
			t.Fatalf("answer %q %v, want the decoded length", b, err)
		}
		wantReset(t, proto, frame([]byte("bad")), true, 1)
	})

	t.Run("not admitted", func(t *testing.T) {
		const proto = "/tenzro/test-serve-admit/1.0.0"
		sp := spec(proto)
		sp.Admit = func(peer.ID) (func(), error) { return nil, errors.New("full") }
		var called atomic.Bool
		srv.SetStreamHandler(proto, Serve(sp, func(st *Stream) error { called.Store(true); return echo(st) }))
		wantReset(t, proto, frame([]byte("x")), true, 1)
		if called.Load() {
			t.Fatal("the handler ran for a stream refused admission")
		}
	})

	t.Run("memory refused", func(t *testing.T) {
		const proto = "/tenzro/test-serve-memory/1.0.0"
		sp := spec(proto)
		// Beyond the 32 MiB a peer may hold in a tenzro service.
		sp.MaxFrame, sp.Reserve = 64<<20, 1
		got := make(chan error, 1)
		srv.SetStreamHandler(proto, Serve(sp, func(st *Stream) error {
			_, err := st.ReadFrame()
			got <- err
			return err
		}))
		hdr := binary.AppendUvarint(nil, 40<<20)
		wantReset(t, proto, append(hdr, 1, 2, 3), false, 1)
		if err := <-got; !errors.Is(err, ErrNoMemory) {
			t.Fatalf("ReadFrame: %v, want ErrNoMemory", err)
		}
	})

	t.Run("frame too large", func(t *testing.T) {
		const proto = "/tenzro/test-serve-large/1.0.0"
		srv.SetStreamHandler(proto, Serve(spec(proto), echo))
		wantReset(t, proto, frame(make([]byte, 2<<10)), true, 1)
	})

	t.Run("deadline", func(t *testing.T) {
		const proto = "/tenzro/test-serve-deadline/1.0.0"
		sp := spec(proto)
		sp.ReadTimeout = 200 * time.Millisecond
		got := make(chan error, 1)
		srv.SetStreamHandler(proto, Serve(sp, func(st *Stream) error {
			_, err := st.ReadFrame()
			got <- err
			return err
		}))
		// A frame begun and never finished.
		wantReset(t, proto, frame([]byte("hello"))[:3], false, 1)
		var ne net.Error
		if err := <-got; !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("ReadFrame: %v, want the deadline", err)
		}
	})

	t.Run("panic", func(t *testing.T) {
		const proto = "/tenzro/test-serve-panic/1.0.0"
		srv.SetStreamHandler(proto, Serve(spec(proto), func(st *Stream) error {
			b, err := st.ReadFrame()
			if err == nil && string(b) == "boom" {
				panic("handler bug")
			}
			return WriteFrame(st, b)
		}))
		wantReset(t, proto, frame([]byte("boom")), true, 0)
		if n := p2ptest.Counter(t, reg, p2ptest.PanicsMetric, "protocol", proto); n != 1 {
			t.Fatalf("%v panics counted, want 1", n)
		}
		b, err := exchange(t, cli, srv.ID(), proto, frame([]byte("ok")), true)
		if r, _ := ReadFrame(bufio.NewReader(bytes.NewReader(b)), 16); err != nil || string(r) != "ok" {
			t.Fatalf("after the panic: %q %v, want ok", b, err)
		}
	})
}

// TestServeStreamServer: StreamServer.Serve admits by its PeerLimits and
// ends the handler's context at the stream's deadline.
func TestServeStreamServer(t *testing.T) {
	srv, cli := servePair(t)
	const proto = "/tenzro/test-serve-server/1.0.0"
	s := NewStreamServer(srv, proto, NewPeerLimits(1, 1, "exchanges"))
	t.Cleanup(s.Stop)
	deadline := make(chan time.Time, 1)
	err := s.Serve(StreamSpec{Service: ServiceExpert, MaxFrame: 64, ReadTimeout: time.Second, WriteTimeout: time.Second},
		func(ctx context.Context, st *Stream) error {
			d, _ := ctx.Deadline()
			deadline <- d
			if !d.Equal(st.Deadline) || s.Active() != 1 {
				return errors.New("not under the stream's deadline and slot")
			}
			return echo(st)
		})
	if err != nil {
		t.Fatal(err)
	}
	b, err := exchange(t, cli, srv.ID(), proto, frame([]byte("hi")), true)
	if err != nil || string(b) != string(frame([]byte("hi"))) {
		t.Fatalf("answer %q %v", b, err)
	}
	if d := <-deadline; d.IsZero() {
		t.Fatal("the handler's context has no deadline")
	}
	if err := s.Serve(StreamSpec{}, nil); !errors.Is(err, ErrServerStarted) {
		t.Fatalf("second Serve: %v", err)
	}
}

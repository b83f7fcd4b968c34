package infer

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func echoHandler(context.Context, *Request, peer.ID, func(*TokenFrame) error) (*FinalFrame, error) {
	return &FinalFrame{FinishReason: "stop"}, nil
}

func TestOversizeRequest(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var calls atomic.Int32
	serve(t, server, ServerConfig{MaxRequestSize: 64 << 10}, func(ctx context.Context, r *Request, p peer.ID, s func(*TokenFrame) error) (*FinalFrame, error) {
		calls.Add(1)
		return echoHandler(ctx, r, p, s)
	})
	// Larger than the muxer's flow-control window: the server answers
	// without reading it, and the client must not hang on the write.
	for _, size := range []int{80 << 10, MaxTextBytes - 100} {
		req := validRequest()
		req.Messages[1].Content = strings.Repeat("x", size)
		_, st, err := Call(context.Background(), client, server.ID(), req, ClientConfig{}, nil)
		ef := wantErrorFrame(t, err, 400, terms.CodeBadRequest)
		if ef.Retryable || !strings.Contains(ef.Message, "exceeds") {
			t.Fatalf("%d bytes: %+v", size, ef)
		}
		if st.BytesReceived != encodedLen(t, &Frame{Error: ef}) {
			t.Fatalf("%d bytes: received %d", size, st.BytesReceived)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("handler ran for an oversize request")
	}
}

func TestMalformedRequest(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, echoHandler)
	good, err := cborx.Marshal(validRequest())
	if err != nil {
		t.Fatal(err)
	}
	short := validRequest()
	short.Nonce = short.Nonce[:3]
	shortNonce, _ := cborx.Marshal(short)
	for name, tc := range map[string]struct {
		payload []byte
		want    string
	}{
		"garbage":       {[]byte("\xff\x00garbage"), "decode"},
		"empty":         {nil, "decode"},
		"trailing":      {append(append([]byte{}, good...), 0), "decode"},
		"unknown field": {append([]byte{0xa1, 0x18, 0x63}, 0x01), "decode"},
		"wrong type":    {[]byte{0xa1, 0x01, 0x61, 'x'}, "decode"},
		"short nonce":   {shortNonce, "nonce is 3 bytes"},
	} {
		f := rawExchange(t, client, server.ID(), tc.payload)
		if f.Error == nil || f.Error.Status != 400 || f.Error.Code != terms.CodeBadRequest || !strings.Contains(f.Error.Message, tc.want) {
			t.Errorf("%s: got %+v, want 400 mentioning %q", name, f.Error, tc.want)
		}
	}
	// The good request, sent the same way, is served.
	if f := rawExchange(t, client, server.ID(), good); f.Final == nil {
		t.Fatalf("good request: %+v", f)
	}
}

func TestRequestTimeout(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{RequestTimeout: 200 * time.Millisecond}, echoHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := client.NewStream(ctx, server.ID(), ProtocolID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Reset() }()
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Half a length prefix, then silence.
	if _, err := s.Write([]byte{0x80}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := io.ReadAll(s); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("server kept a silent stream for %s (err %v)", time.Since(start), err)
	}
}

// rawServer serves ProtocolID with fn instead of Register: a provider that
// breaks the protocol.
func rawServer(t *testing.T, fn func(s network.Stream, send func(*Frame))) (client, server peer.ID, call func(ClientConfig) (*FinalFrame, int, error)) {
	t.Helper()
	c, srv := p2ptest.Pair(t)
	srv.SetStreamHandler(ProtocolID, func(s network.Stream) {
		r := bufio.NewReader(s)
		if _, err := p2p.ReadFrame(r, DefaultMaxRequestSize); err != nil {
			_ = s.Reset()
			return
		}
		fn(s, func(f *Frame) {
			b, _ := cborx.Marshal(f)
			_ = p2p.WriteFrame(s, b)
		})
	})
	return c.ID(), srv.ID(), func(cfg ClientConfig) (*FinalFrame, int, error) {
		n := 0
		fin, _, err := Call(context.Background(), c, srv.ID(), validRequest(), cfg, func(*TokenFrame) error { n++; return nil })
		return fin, n, err
	}
}

func TestCutStreams(t *testing.T) {
	for name, tc := range map[string]struct {
		fn   func(s network.Stream, send func(*Frame))
		want error
	}{
		"close after tokens": {func(s network.Stream, send func(*Frame)) {
			send(&Frame{Token: &TokenFrame{Text: "a"}})
			send(&Frame{Token: &TokenFrame{Text: "b"}})
			_ = s.Close()
		}, ErrNoFinal},
		"reset after tokens": {func(s network.Stream, send func(*Frame)) {
			send(&Frame{Token: &TokenFrame{Text: "a"}})
			time.Sleep(50 * time.Millisecond)
			_ = s.Reset()
		}, ErrNoFinal},
		"truncated frame": {func(s network.Stream, send func(*Frame)) {
			_, _ = s.Write([]byte{0x20, 0xa1, 0x01})
			_ = s.Close()
		}, ErrNoFinal},
		"two kinds": {func(s network.Stream, send func(*Frame)) {
			send(&Frame{Token: &TokenFrame{Text: "a"}, Final: &FinalFrame{}})
			_ = s.Close()
		}, ErrMalformedFrame},
		"empty frame": {func(s network.Stream, send func(*Frame)) {
			send(&Frame{})
			_ = s.Close()
		}, ErrMalformedFrame},
		"not cbor": {func(s network.Stream, send func(*Frame)) {
			_ = p2p.WriteFrame(s, []byte("data: {}"))
			_ = s.Close()
		}, ErrMalformedFrame},
		"status 200 error": {func(s network.Stream, send func(*Frame)) {
			send(&Frame{Error: &ErrorFrame{Status: 200}})
			_ = s.Close()
		}, ErrMalformedFrame},
		"frame too large": {func(s network.Stream, send func(*Frame)) {
			_ = p2p.WriteFrame(s, make([]byte, 2<<10))
			_ = s.Close()
		}, ErrMalformedFrame},
	} {
		_, _, call := rawServer(t, tc.fn)
		fin, _, err := call(ClientConfig{MaxFrameSize: 1 << 10})
		if fin != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: final %+v error %v, want %v", name, fin, err, tc.want)
		}
	}
}

func TestProviderAbort(t *testing.T) {
	// The provider's connection dies mid-generation (a crashed process).
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, func(ctx context.Context, _ *Request, p peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		for i := range 3 {
			if err := send(&TokenFrame{Text: "t", TokenIDs: []int{i}}); err != nil {
				return nil, err
			}
		}
		_ = server.Network().ClosePeer(p)
		return &FinalFrame{FinishReason: "stop"}, nil
	})
	fin, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil)
	if fin != nil || !errors.Is(err, ErrNoFinal) {
		t.Fatalf("final %+v error %v, want ErrNoFinal", fin, err)
	}
}

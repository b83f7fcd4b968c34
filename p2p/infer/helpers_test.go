package infer

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// tokenThenWait is a handler that sends one token, then waits for its
// context to end (closing observed) or, at most, wait.
func tokenThenWait(observed chan struct{}, wait time.Duration) Handler {
	return func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		if err := send(&TokenFrame{Text: "a"}); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			close(observed)
			return nil, ctx.Err()
		case <-time.After(wait):
			return &FinalFrame{}, nil
		}
	}
}

// serve registers handler on server and unregisters at cleanup.
func serve(t *testing.T, server host.Host, cfg ServerConfig, handler Handler) {
	t.Helper()
	unregister := Register(server, cfg, handler, nil)
	t.Cleanup(unregister)
}

func validRequest() *Request {
	nonce := make([]byte, NonceSize)
	_, _ = rand.Read(nonce)
	id := make([]byte, ModelIDSize)
	id[0] = 7
	return &Request{
		Nonce:        nonce,
		ModelID:      id,
		Model:        "tiny",
		Chat:         true,
		Messages:     []inference.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}},
		Sampling:     inference.Sampling{Temperature: 0.7, TopP: 0.9, TopK: 40, Seed: 42, MaxTokens: 16, Stop: []string{"\n\n"}},
		TopLogProbs:  2,
		Stream:       true,
		Verification: "receipt",
		SessionID:    "s-1",
		QuoteDigest:  make([]byte, DigestSize),
	}
}

// frameLen is the size of payload framed by p2p.WriteFrame.
func frameLen(payload []byte) int64 {
	return int64(binary.PutUvarint(make([]byte, binary.MaxVarintLen64), uint64(len(payload))) + len(payload))
}

// encodedLen is the framed size of f as the server sends it.
func encodedLen(t *testing.T, f *Frame) int64 {
	t.Helper()
	b, err := cborx.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return frameLen(b)
}

// rawExchange opens a stream to server, writes payload as one frame and
// returns the first frame of the answer, decoded.
func rawExchange(t *testing.T, client host.Host, server peer.ID, payload []byte) *Frame {
	t.Helper()
	s := p2ptest.Stream(t, client, server, ProtocolID)
	defer func() { _ = s.Reset() }()
	if err := p2p.WriteFrame(s, payload); err != nil {
		t.Fatal(err)
	}
	b, err := p2p.ReadFrame(bufio.NewReader(s), DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	f, err := decodeFrame(b, DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantErrorFrame asserts err is an *ErrorFrame with the status and code.
func wantErrorFrame(t *testing.T, err error, status int, code string) *ErrorFrame {
	t.Helper()
	var ef *ErrorFrame
	if !errors.As(err, &ef) {
		t.Fatalf("error %v (%T), want *ErrorFrame %d", err, err, status)
	}
	if ef.Status != status || (code != "" && ef.Code != code) {
		t.Fatalf("error frame %+v, want status %d code %q", ef, status, code)
	}
	return ef
}

// waitDone waits for ch or fails after d.
func waitDone(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
}

package payment

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestBadFramesReset: a frame that cannot be a Delivery resets the stream
// and reaches no sink, and the server goes on serving.
func TestBadFramesReset(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(nil)
	srv := serve(t, server, ServerConfig{}, sink)
	good, err := encodeDelivery(&Delivery{Network: testNetwork, Records: records(t, 2, 64)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(good, []byte{0xa2, 0x01}) {
		t.Fatalf("delivery encoding starts %x, want map(2) key 1", good[:2])
	}
	// Key 1 as a two-byte integer: the same value, not canonical.
	nonCanonical := append([]byte{0xa2, 0x18, 0x01}, good[2:]...)
	empty, _ := cborx.Marshal(&Delivery{Network: testNetwork})
	tooMany, _ := cborx.Marshal(&Delivery{Network: testNetwork, Records: make([]receipt.PaymentRecord, MaxRecords+1)})
	unknownField, _ := cborx.Marshal(map[int]any{1: testNetwork, 2: records(t, 1, 64), 3: "x"})
	var oversized []byte
	oversized = binary.AppendUvarint(oversized, MaxFrameSize+1)

	for name, raw := range map[string][]byte{
		"not CBOR":        frameOf([]byte{0xff, 0x00, 0x13}),
		"not canonical":   frameOf(nonCanonical),
		"no records":      frameOf(empty),
		"too many":        frameOf(tooMany),
		"unknown field":   frameOf(unknownField),
		"trailing bytes":  frameOf(append(append([]byte{}, good...), 0x00)),
		"truncated":       frameOf(good)[:len(good)/2],
		"oversized":       oversized,
		"bad length":      {0x80, 0x00},
		"nothing at all":  {},
		"half a varint":   {0x80},
		"ends after size": binary.AppendUvarint(nil, 50),
	} {
		ack, err := rawStream(t, client, server.ID(), raw)
		if err == nil {
			t.Errorf("%s: acked %x, want a reset", name, ack)
			continue
		}
		wantReset(t, ack, err)
	}
	if _, calls := sink.count(); calls != 0 {
		t.Fatalf("bad frames reached the sink %d times", calls)
	}
	if st := srv.Stats(); st.Reset != 12 || st.Deliveries != 0 {
		t.Fatalf("stats %+v, want 12 resets and no delivery", st)
	}
	// Deliver sees a reset as a transport failure, every record not acked.
	if _, err := rawStream(t, client, server.ID(), frameOf(good)); err != nil {
		t.Fatalf("a good frame after the bad ones: %v", err)
	}
	if n, _ := sink.count(); n != 2 {
		t.Fatalf("sink holds %d records after a good frame, want 2", n)
	}
}

// blockingSink blocks Accept on records of index 0 until release is
// closed or ctx ends (returning ctx's error), reporting each entry.
func blockingSink() (sink *recordingSink, entered chan struct{}, release chan struct{}) {
	entered, release = make(chan struct{}, 16), make(chan struct{})
	sink = newSink(func(ctx context.Context, rec *receipt.PaymentRecord) error {
		if index(rec) != 0 {
			return nil
		}
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return sink, entered, release
}

func waitEntered(t *testing.T, entered chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("sink never entered")
		}
	}
}

// TestPerPeerLimit: a peer with MaxPerPeer deliveries in progress has its
// next stream reset unread, while another peer is still served.
func TestPerPeerLimit(t *testing.T) {
	client, server := newPair(t)
	other := newHost(t)
	connect(t, other, server)
	sink, entered, release := blockingSink()
	srv := serve(t, server, ServerConfig{Limits: p2p.Limits{MaxPerPeer: 2}}, sink)

	type outcome struct {
		res []Result
		err error
	}
	done := make(chan outcome, 2)
	for range 2 {
		recs := records(t, 1, 64)
		go func() {
			res, err := Deliver(context.Background(), client, testNetwork, server.ID(), recs)
			done <- outcome{res, err}
		}()
	}
	waitEntered(t, entered, 2)

	res, err := Deliver(t.Context(), client, testNetwork, server.ID(), records(t, 1, 64))
	if err == nil {
		t.Fatalf("a third delivery from the same peer: %+v, want a transport error", res)
	}
	if len(res) != 1 || !res[0].Transient() || Acked(res)[0] {
		t.Fatalf("results of the refused delivery %+v, want one CodeRetry", res)
	}
	// Another peer is not limited by the first one's deliveries.
	recs := records(t, 3, 64)[1:]
	if res, err := Deliver(t.Context(), other, testNetwork, server.ID(), recs); err != nil || !res[0].OK() || !res[1].OK() {
		t.Fatalf("another peer: %+v %v", res, err)
	}
	close(release)
	for range 2 {
		o := <-done
		if o.err != nil || !o.res[0].OK() {
			t.Fatalf("a held delivery: %+v %v", o.res, o.err)
		}
	}
	if _, calls := sink.count(); calls != 4 {
		t.Fatalf("sink called %d times, want 4 (the over-limit stream unread)", calls)
	}
	if st := srv.Stats(); st.Reset != 1 || st.Deliveries != 3 {
		t.Fatalf("stats %+v, want 1 reset, 3 deliveries", st)
	}
}

// TestContextCancel: cancelling Deliver's context while the provider
// persists resets the stream at once; nothing of the frame counts as acked.
func TestContextCancel(t *testing.T) {
	client, server := newPair(t)
	sink, entered, release := blockingSink()
	defer close(release)
	serve(t, server, ServerConfig{}, sink)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		// Cancels once the provider holds the record, or gives up.
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
		}
		cancel()
	}()
	res, err := Deliver(ctx, client, testNetwork, server.ID(), records(t, 3, 64))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Deliver after cancel: %v, want context.Canceled", err)
	}
	for i, r := range res {
		if !r.Transient() {
			t.Fatalf("record %d: %+v, want CodeRetry", i, r)
		}
	}
	if _, err := Deliver(ctx, client, testNetwork, server.ID(), records(t, 1, 64)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Deliver on a cancelled context: %v", err)
	}
}

// TestServerTimeout: records the sink has not persisted within the
// exchange's Timeout are answered CodeRetry; the ack still arrives.
func TestServerTimeout(t *testing.T) {
	client, server := newPair(t)
	sink, _, release := blockingSink()
	defer close(release)
	srv := serve(t, server, ServerConfig{Limits: p2p.Limits{Timeout: 300 * time.Millisecond}}, sink)
	res, err := Deliver(t.Context(), client, testNetwork, server.ID(), records(t, 3, 64))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.Transient() {
			t.Fatalf("record %d: %+v, want CodeRetry", i, r)
		}
	}
	if !strings.Contains(res[2].Reason, "out of time") {
		t.Errorf("record not reached: %q", res[2].Reason)
	}
	if st := srv.Stats(); st.Transient != 3 || st.Deliveries != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStop: Stop ends the deliveries in progress (their records CodeRetry)
// and removes the protocol.
func TestStop(t *testing.T) {
	client, server := newPair(t)
	sink, entered, release := blockingSink()
	defer close(release)
	srv := serve(t, server, ServerConfig{}, sink)
	type outcome struct {
		res []Result
		err error
	}
	done := make(chan outcome, 1)
	recs := records(t, 2, 64)
	go func() {
		res, err := Deliver(context.Background(), client, testNetwork, server.ID(), recs)
		done <- outcome{res, err}
	}()
	waitEntered(t, entered, 1)
	srv.Stop()
	o := <-done
	if o.err != nil || len(o.res) != 2 || !o.res[0].Transient() || !o.res[1].Transient() {
		t.Fatalf("delivery cut by Stop: %+v %v, want two CodeRetry", o.res, o.err)
	}
	if _, err := Deliver(t.Context(), client, testNetwork, server.ID(), records(t, 1, 64)); err == nil {
		t.Fatal("a stopped server still answers")
	}
	srv.Stop() // a second Stop does nothing
	if err := srv.Start(); err == nil {
		t.Fatal("Start after Stop succeeded")
	}
}

func TestServerConfig(t *testing.T) {
	h := newHost(t)
	for _, c := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{}, "network"},
		{ServerConfig{Network: "n", Limits: p2p.Limits{MaxPerPeer: -1}}, "max_per_peer"},
		{ServerConfig{Network: "n", Limits: p2p.Limits{MaxConcurrent: -1}}, "max_concurrent"},
		{ServerConfig{Network: "n", Limits: p2p.Limits{Timeout: -time.Second}}, "timeout"},
		{ServerConfig{Network: "n", Limits: p2p.Limits{MaxPerPeer: 9, MaxConcurrent: 8}}, "exceeds"},
	} {
		if _, err := NewServer(h, c.cfg, newSink(nil), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	if _, err := NewServer(h, ServerConfig{Network: "n"}, nil, nil); err == nil {
		t.Error("a server without a sink")
	}
	srv, err := NewServer(h, ServerConfig{Network: "n"}, newSink(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
	srv.Stop()
}

package payment

import (
	"bufio"
	"errors"
	"testing"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/tenzrod/tenzrod/p2p"
)

// TestMalformedAck: an ack that does not answer every record exactly once
// is a transport failure; nothing of the frame counts as acked.
func TestMalformedAck(t *testing.T) {
	client, server := newPair(t)
	for name, ack := range map[string]*Ack{
		"too few results":  {Results: []Result{{}}},
		"too many results": {Results: []Result{{}, {}, {}}},
		"reason too long":  {Results: []Result{{}, {Code: 9, Reason: string(make([]byte, MaxReasonLen+1))}}},
	} {
		b, err := encodeAck(ack)
		if err != nil {
			t.Fatal(err)
		}
		server.SetStreamHandler(ProtocolID, func(s network.Stream) {
			if _, err := p2p.ReadFrame(bufio.NewReader(s), MaxFrameSize); err == nil {
				_ = p2p.WriteFrame(s, b)
			}
			_ = s.Close()
		})
		res, err := Deliver(t.Context(), client, testNetwork, server.ID(), records(t, 2, 64))
		if !errors.Is(err, ErrMalformedAck) {
			t.Fatalf("%s: %v, want ErrMalformedAck", name, err)
		}
		if len(res) != 2 || Acked(res)[0] || Acked(res)[1] {
			t.Fatalf("%s: results %+v, want two CodeRetry", name, res)
		}
	}
}

// BenchmarkDeliver measures records delivered, persisted (in memory) and
// acked per second over loopback TCP, in full frames of records carrying
// receipts of a typical size.
func BenchmarkDeliver(b *testing.B) {
	const receiptLen = 6 << 10
	client, server := newPair(b)
	serve(b, server, ServerConfig{}, newSink(nil))
	recs := records(b, MaxRecords, receiptLen)
	b.SetBytes(int64(len(recs) * receiptLen))
	for b.Loop() {
		res, err := Deliver(b.Context(), client, testNetwork, server.ID(), recs)
		if err != nil || !res[len(res)-1].OK() {
			b.Fatal(res[len(res)-1], err)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
}

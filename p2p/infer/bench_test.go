package infer

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// BenchmarkCallRoundTrip is one call of 16 token frames over loopback TCP:
// stream open, request, admission, frames, final, close.
func BenchmarkCallRoundTrip(b *testing.B) { benchCallRoundTrip(b, false) }

// BenchmarkCallRoundTripWarm is the same call on a stream Warm opened
// ahead of it.
func BenchmarkCallRoundTripWarm(b *testing.B) { benchCallRoundTrip(b, true) }

func benchCallRoundTrip(b *testing.B, warm bool) {
	client, server := p2ptest.Pair(b)
	unregister := Register(server, ServerConfig{}, func(_ context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		for range 16 {
			if err := send(&TokenFrame{Text: "token", TokenIDs: []int{42}}); err != nil {
				return nil, err
			}
		}
		return &FinalFrame{FinishReason: "stop", CompletionTokens: 16}, nil
	}, nil)
	defer unregister()
	req := validRequest()
	var cfg ClientConfig
	if warm {
		cfg.Warm = NewWarm(client)
		defer cfg.Warm.Close()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Call(context.Background(), client, server.ID(), req, cfg, nil); err != nil {
			b.Fatal(err)
		}
		if warm {
			b.StopTimer()
			for cfg.Warm.Idle() == 0 { // a buyer's next call comes later
				time.Sleep(50 * time.Microsecond)
			}
			b.StartTimer()
		}
	}
}

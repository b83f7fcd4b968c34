package infer

import (
	"context"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// BenchmarkCallRoundTrip is one call of 16 token frames over loopback TCP:
// stream open, request, admission, frames, final, close.
func BenchmarkCallRoundTrip(b *testing.B) {
	client, server := newPair(b)
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
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

package expert

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// The per-token cost of remote experts against the local engine on the
// devnet MoE model (`tenzrod model gen --moe` defaults), three holders on
// loopback, one thread everywhere:
//
//	go test -run '^$' -bench 'Decode' -benchtime 64x ./p2p/expert/
//
// Both report ns/token; the remote one adds batches per forward pass and
// bytes on the wire per token (request plus response frames).

func devnetMoE(b *testing.B) string {
	o := modelgen.DevnetOptions()
	o.MoE = true
	dir := filepath.Join(b.TempDir(), "moe")
	if err := modelgen.GenerateModel(dir, o); err != nil {
		b.Fatal(err)
	}
	return dir
}

var benchRequest = inference.GenerateRequest{
	Messages: []inference.Message{{Role: "user", Content: "Tell me about open markets"}},
	Sampling: inference.Sampling{Temperature: 0.8, Seed: 11, MaxTokens: 32},
}

// benchDecode generates b.N answers and reports the cost per output token.
func benchDecode(b *testing.B, e *llm.Engine) int {
	b.Helper()
	tokens := 0
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		res, err := e.Generate(context.Background(), benchRequest, func(inference.Token) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		tokens += len(res.Tokens)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(tokens), "ns/token")
	return tokens
}

func BenchmarkDecodeLocal(b *testing.B) {
	e, err := llm.Open(devnetMoE(b), llm.Options{Threads: 1, CacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, e)
}

func BenchmarkDecodeRemote(b *testing.B) {
	dir := devnetMoE(b)
	local, err := llm.Open(dir, llm.Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	caller := newHost(b, nil)
	comp := modelComputer{local.Model()}
	var hs []*holder
	for range 3 {
		hs = append(hs, startHolder(b, caller, comp))
	}
	o := modelgen.DevnetOptions()
	table := &staticTable{by: map[[2]int][]Holder{}}
	for l := range o.Layers {
		for e := range o.Experts {
			table.by[[2]int{l, e}] = []Holder{hs[e%3].entry(10), hs[(e+1)%3].entry(10)}
		}
	}
	c, err := NewCaller(caller, CallerConfig{Network: testNetwork, Model: local.Info().ID, Dim: o.Dim}, table, nil)
	if err != nil {
		b.Fatal(err)
	}
	e, err := llm.Open(dir, llm.Options{Threads: 1, CacheBytes: -1, ExpertLayer: layerFunc(c)})
	if err != nil {
		b.Fatal(err)
	}
	before := c.Stats()
	tokens := benchDecode(b, e)
	st := c.Stats()
	forwards := float64(st.Layers-before.Layers) / float64(o.Layers)
	b.ReportMetric(float64(st.Exchanges-before.Exchanges)/forwards, "batches/forward")
	b.ReportMetric(float64(st.BytesSent+st.BytesRecv-before.BytesSent-before.BytesRecv)/float64(tokens), "wire-B/token")
	if len(st.Failures) != 0 {
		b.Fatalf("failures %v", st.Failures)
	}
}

package node

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// BenchmarkGatewayOverhead measures the latency a gateway adds in front of
// a provider: the same minimal request (one output token, fixed seed) sent
// at a fixed rate to the provider's own OpenAI route and through a gateway
// (HTTP → quote → rank → libp2p stream → provider → signed receipt →
// receipt verification → payment settled in the gateway's store). It
// reports p50 and p99 of both and of the difference, and the same
// difference for the time to the first content chunk of a streamed answer
// (added-ttft-*). Run with:
//
//	go test -run '^$' -bench GatewayOverhead -benchtime 1x ./node/
//
// (scripts/bench-overhead). Two providers' models: "devnet" is the devnet
// model (7.5 MB of weights, ~10 ms per request here), and "tiny" a 1-layer
// model the bench generates (~80 KB, well under a millisecond). On one
// machine the gateway shares the CPU caches with the provider's engine,
// which sweeps its whole weights per token: with the devnet model every
// gateway step after the engine runs on cold caches, which a gateway on
// its own machine would not. The tiny model shows the gateway's own cost.
// The request count and rate are fixed so each run measures the same
// thing; b.N only repeats the whole measurement.
func BenchmarkGatewayOverhead(b *testing.B) {
	dir, id := testModelDir(b)
	b.Run("model=devnet", func(b *testing.B) { benchOverhead(b, DevnetModel(dir, id)) })
	b.Run("model=tiny", func(b *testing.B) { benchOverhead(b, tinyModel(b)) })
	// The same on a chain: the gateway pays with a signed payment record
	// (kept in its outbox, delivered to the provider, settled by it) and
	// the provider checks the settler's authorization and the escrow.
	b.Run("model=devnet,chain", func(b *testing.B) {
		net := newChainNet(b, 1, 1, 0, testChainParams(3600), func(c *Config) { c.Router.ProbeInterval = 0 })
		waitRegistered(b, net.validators[0], net.registered)
		benchOverheadOn(b, net.validators[0], net.registered[0], DevnetModelName)
	})
}

// tinyModel generates a 1-layer dense model of about 20,000 weights.
func tinyModel(t testing.TB) ModelConfig {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	o := modelgen.DevnetOptions()
	o.Name, o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context, o.Experts, o.ExpertsUsed =
		"tenzro-tiny", 1, 32, 2, 1, 64, 300, 256, 0, 0
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	_, root, err := catalog.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := DevnetModel(dir, root.String())
	m.Name = o.Name
	return m
}

func benchOverhead(b *testing.B, m ModelConfig) {
	gw, ps := testMarketServing(b, 1, m)
	benchOverheadOn(b, gw, ps[0], m.Name)
}

// benchOverheadOn measures gateway gw in front of provider p serving model.
func benchOverheadOn(b *testing.B, gw, p *Node, model string) {
	const (
		requests = 300
		rate     = 50 // per second
	)
	ps := []*Node{p}
	const chat = `{"model":%q,"messages":[{"role":"user","content":"x"}],"seed":1,"temperature":0,%s}`
	body, streamBody := fmt.Sprintf(chat, model, `"max_tokens":1`), fmt.Sprintf(chat, model, `"max_tokens":2,"stream":true`)
	// post sends body to url's chat route (with the buyer's token when
	// auth) and returns the response and when the request started.
	post := func(url, body string, auth bool) (*http.Response, time.Time) {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+testToken)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b.Fatalf("%s: status %d", url, resp.StatusCode)
		}
		return resp, start
	}
	send := func(url string, auth bool) time.Duration {
		resp, start := post(url, body, auth)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	// ttft streams a two-token answer and times its first content chunk:
	// the overhead a streaming buyer feels before text starts to flow.
	ttft := func(url string, auth bool) time.Duration {
		resp, start := post(url, streamBody, auth)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var first time.Duration
		for sc.Scan() {
			if first == 0 && sseContent(sc.Text()) != "" {
				first = time.Since(start)
			}
		}
		if first == 0 {
			b.Fatalf("%s: no content chunk", url)
		}
		return first
	}
	for i := 0; i < 20; i++ { // warm connections, P² and caches
		send(ps[0].APIURL(), false)
		send(gw.APIURL(), true)
		ttft(ps[0].APIURL(), false)
		ttft(gw.APIURL(), true)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var direct, routed []time.Duration
		tick := time.NewTicker(time.Second / rate)
		for i := 0; i < requests; i++ {
			<-tick.C
			if i%2 == 0 {
				direct = append(direct, send(ps[0].APIURL(), false))
			} else {
				routed = append(routed, send(gw.APIURL(), true))
			}
		}
		d50, d99 := quantiles(direct)
		r50, r99 := quantiles(routed)
		b.ReportMetric(ms(d50), "direct-p50-ms")
		b.ReportMetric(ms(d99), "direct-p99-ms")
		b.ReportMetric(ms(r50), "gateway-p50-ms")
		b.ReportMetric(ms(r99), "gateway-p99-ms")
		b.ReportMetric(ms(r50-d50), "added-p50-ms")
		b.ReportMetric(ms(r99-d99), "added-p99-ms")

		var dFirst, rFirst []time.Duration
		for i := 0; i < requests; i++ {
			<-tick.C
			if i%2 == 0 {
				dFirst = append(dFirst, ttft(ps[0].APIURL(), false))
			} else {
				rFirst = append(rFirst, ttft(gw.APIURL(), true))
			}
		}
		d50, d99 = quantiles(dFirst)
		r50, r99 = quantiles(rFirst)
		b.ReportMetric(ms(r50-d50), "added-ttft-p50-ms")
		b.ReportMetric(ms(r99-d99), "added-ttft-p99-ms")
		tick.Stop()
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)*50/100], ds[len(ds)*99/100]
}

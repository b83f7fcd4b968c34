package node

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkGatewayOverhead measures the latency a gateway adds in front of
// a provider: the same minimal request (one output token, fixed seed) sent
// at a fixed rate to the provider's own OpenAI route and through a gateway
// (HTTP → quote → rank → libp2p stream → provider → receipt verification →
// payment settled in the gateway's store). It reports p50 and p99 of both
// and of the difference. Run with:
//
//	go test -run '^$' -bench GatewayOverhead -benchtime 1x ./node/
//
// (scripts/bench-overhead). The request count and rate are fixed so each
// run measures the same thing; b.N only repeats the whole measurement.
func BenchmarkGatewayOverhead(b *testing.B) {
	const (
		requests = 300
		rate     = 50 // per second
	)
	gw, ps := testMarket(b, 1)
	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"x"}],"max_tokens":1,"seed":1,"temperature":0}`
	send := func(url string, auth bool) time.Duration {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+testToken)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var buf [4096]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: status %d", url, resp.StatusCode)
		}
		return time.Since(start)
	}
	for i := 0; i < 20; i++ { // warm connections, P² and caches
		send(ps[0].APIURL(), false)
		send(gw.APIURL(), true)
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
		tick.Stop()
		d50, d99 := quantiles(direct)
		r50, r99 := quantiles(routed)
		b.ReportMetric(ms(d50), "direct-p50-ms")
		b.ReportMetric(ms(d99), "direct-p99-ms")
		b.ReportMetric(ms(r50), "gateway-p50-ms")
		b.ReportMetric(ms(r99), "gateway-p99-ms")
		b.ReportMetric(ms(r50-d50), "added-p50-ms")
		b.ReportMetric(ms(r99-d99), "added-p99-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)*50/100], ds[len(ds)*99/100]
}

package attacktest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// getSessionUnauth is issue 35's low finding: tenzro_getSession told
// anyone with a session ID the session's payer. Without the buyer's token
// (no header, a made-up token, the token under another scheme) it must be
// 401; with it, the session.
func getSessionUnauth(ctx context.Context, e *env) (Verdict, string, error) {
	a, err := e.t.chat(ctx, e.t.Token, "open a session", 4, map[string]any{"session": map[string]any{"continuity": true}})
	if err != nil {
		return Failed, "", err
	}
	if a.Status != http.StatusOK || a.Session == "" {
		return NA, fmt.Sprintf("no session opened (HTTP %d %.100s)", a.Status, a.Body), nil
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tenzro_getSession","params":{"id":"` + a.Session + `"}}`)
	var leaks []string
	for _, tok := range []string{"", "sk-nobody-holds-this"} {
		r, err := e.t.post(ctx, "/rpc", tok, body)
		if err != nil {
			return Failed, "", err
		}
		if r.Status != http.StatusUnauthorized && r.Status != http.StatusNotFound {
			leaks = append(leaks, fmt.Sprintf("token %q: HTTP %d %.80s", tok, r.Status, r.Body))
		}
	}
	own, err := e.t.post(ctx, "/rpc", e.t.Token, body)
	if err != nil {
		return Failed, "", err
	}
	var out struct {
		Result *struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if len(leaks) > 0 {
		return Broke, strings.Join(leaks, "; "), nil
	}
	if json.Unmarshal(own.Body, &out) != nil || out.Result == nil || out.Result.ID != a.Session {
		return Broke, fmt.Sprintf("the buyer's own token cannot read its session: HTTP %d %.100s", own.Status, own.Body), nil
	}
	return Held, "no token and a wrong token: 401; the buyer's token reads it", nil
}

// oversized is #19's second probe: requests over the protocol's limits
// were 502s that opened every provider's breaker. Each must be a 400, and
// honest calls right after must all succeed.
func oversized(ctx context.Context, e *env) (Verdict, string, error) {
	many := make([]map[string]string, 257)
	for i := range many {
		many[i] = map[string]string{"role": "user", "content": "x"}
	}
	bodies := []map[string]any{
		{"model": e.t.Model, "messages": many},
		{"model": e.t.Model, "max_tokens": 1<<20 + 1, "messages": many[:1]},
		{"model": e.t.Model, "top_k": uint64(1<<63 - 1), "messages": many[:1]},
	}
	var bad []string
	for round := 0; round < 2; round++ {
		for i, b := range bodies {
			raw, _ := json.Marshal(b)
			a, err := e.t.post(ctx, "/v1/chat/completions", e.t.Token, raw)
			if err != nil {
				return Failed, "", err
			}
			if a.Status != http.StatusBadRequest {
				bad = append(bad, fmt.Sprintf("request %d: HTTP %d", i, a.Status))
			}
		}
	}
	for i := 0; i < 3; i++ {
		if h, ok := e.honest(ctx); !ok {
			return Broke, "honest call right after: " + h, nil
		}
	}
	if len(bad) > 0 {
		return Broke, strings.Join(bad, "; "), nil
	}
	return Held, "6 of 6 oversized requests 400; 3 of 3 honest calls right after served", nil
}

// streamFlood is #19's third probe: one token's burst of concurrent calls
// made providers answer overloaded, each answer counted as a failure, so
// every breaker opened and every other buyer got 503. Now the burst meets
// the buyer's fair share (429) and the providers' typed "busy", which are
// neutral: no attempt may count as a provider failure (the gateway's
// tenzro_router_attempts_total{outcome="failed"}), and the call after it
// is served (Run's honest call). The flooder's own statuses are reported.
func streamFlood(ctx context.Context, e *env) (Verdict, string, error) {
	const n = 96
	failed0, err := e.t.metricSum(ctx, "tenzro_router_attempts_total", `outcome="failed"`)
	if err != nil {
		return Failed, "", err
	}
	throttled0, _ := e.t.metricSum(ctx, "tenzro_router_attempts_total", `outcome="throttled"`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	sample := map[int]string{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := e.t.chat(ctx, e.t.Token, fmt.Sprint("flood ", i, ": write a long story about rivers"), 48, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[-1]++
				sample[-1] = err.Error()
				return
			}
			codes[a.Status]++
			if _, ok := sample[a.Status]; !ok && a.Status != http.StatusOK {
				sample[a.Status] = fmt.Sprintf("%.90s", a.Body)
			}
			e.note(a)
		}()
	}
	wg.Wait()
	failed, err := e.t.metricSum(ctx, "tenzro_router_attempts_total", `outcome="failed"`)
	if err != nil {
		return Failed, "", err
	}
	throttled, _ := e.t.metricSum(ctx, "tenzro_router_attempts_total", `outcome="throttled"`)
	detail := fmt.Sprintf("%d concurrent calls, status: count %v; %.0f provider attempts throttled (neutral), %.0f counted failed; first bodies %v",
		n, codes, throttled-throttled0, failed-failed0, sample)
	if codes[-1] > 0 || failed > failed0 {
		return Broke, detail, nil
	}
	return Held, detail, nil
}

// metricSum adds up the gateway's /metrics samples of name whose labels
// contain match.
func (t *Target) metricSum(ctx context.Context, name, match string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.API+"/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("attacktest: %w", err)
	}
	resp, err := t.HTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("attacktest: GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, match) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// slowBodies is issue 35's high finding (and #19's slow 4 MB bodies):
// unauthenticated clients announcing a 1 MiB body and sending a byte a
// second held every body slot. While SlowSenders do that, half on /rpc
// and half on /v1, honest calls must all be served; their p50 against a
// quiet p50 is reported.
func slowBodies(ctx context.Context, e *env) (Verdict, string, error) {
	u, err := url.Parse(e.t.API)
	if err != nil {
		return Failed, "", err
	}
	quiet, err := e.latencies(ctx, 5)
	if err != nil {
		return Failed, "", err
	}
	actx, stop := context.WithTimeout(ctx, e.t.SlowFor+30*time.Second)
	defer stop()
	var cut, opened atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < e.t.SlowSenders; i++ {
		path := "/rpc"
		if i%2 == 1 {
			path = "/v1/chat/completions"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if slowSender(actx, u.Host, path) {
				cut.Add(1)
			}
			opened.Add(1)
		}()
	}
	time.Sleep(2 * time.Second) // let the senders take their slots before the honest calls come
	under, err := e.latencies(ctx, 10)
	stop()
	wg.Wait()
	if err != nil {
		return Broke, fmt.Sprintf("with %d slow senders: %v", e.t.SlowSenders, err), nil
	}
	q, s := p50(quiet), p50(under)
	return Held, fmt.Sprintf("%d slow senders (%d cut by the server): 10 of 10 honest calls served; p50 %s quiet, %s under attack (×%.2f)",
		e.t.SlowSenders, cut.Load(), q.Round(time.Millisecond), s.Round(time.Millisecond), float64(s)/float64(max(q, 1))), nil
}

// latencies makes n honest calls one after another; any failure is an
// error.
func (e *env) latencies(ctx context.Context, n int) ([]time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		a, err := e.t.chat(ctx, e.t.Token, fmt.Sprint("latency ", i), 4, nil)
		if err != nil {
			return ds, err
		}
		if a.Status != http.StatusOK {
			return ds, fmt.Errorf("honest call %d of %d: HTTP %d %.120s", i+1, n, a.Status, a.Body)
		}
		e.note(a)
		ds = append(ds, a.Took)
	}
	return ds, nil
}

// slowSender announces a 1 MiB body without a token and sends it a byte a
// second until ctx ends; it reports whether the server cut it first.
func slowSender(ctx context.Context, host, path string) bool {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	defer conn.Close() //nolint:errcheck // the probe's verdict is already decided by then
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n", path, host); err != nil {
		return true
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			if _, err := conn.Write([]byte("{")); err != nil {
				return true
			}
		}
	}
}

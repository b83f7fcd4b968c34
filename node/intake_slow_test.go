package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowSender holds one body slot as long as the server lets it: it
// connects from its own loopback address (attackers are other hosts than
// the buyer), declares a 1 MB body on path and sends a byte a second,
// reconnecting whenever the server ends the connection, until ctx ends.
// It counts the connections the server cut.
func slowSender(ctx context.Context, from, addr, path string, cut *atomic.Int64) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, addr, 1<<20)
		for err == nil && ctx.Err() == nil {
			time.Sleep(time.Second)
			_, err = c.Write([]byte(" "))
		}
		if ctx.Err() == nil {
			cut.Add(1)
		}
		stop()
		_ = c.Close()
	}
}

// TestSlowBodiesDoNotStarveBuyers is #35's intake acceptance: 40, then
// 200, slow unauthenticated body senders on /rpc and /v1 (a byte a second
// each, from five other addresses) leave every one of 20 honest buyer
// calls served; the buyers' p50 latency is reported against a quiet run.
func TestSlowBodiesDoNotStarveBuyers(t *testing.T) {
	gw, _ := floodGateway(t)
	addr := strings.TrimPrefix(gw.APIURL(), "http://")
	calls := func(label string) time.Duration {
		var took []time.Duration
		for i := range 20 {
			start := time.Now()
			r := askRouted(t, gw, DevnetModelName, fmt.Sprintf("%s %d", label, i))
			if len(r.Choices) != 1 || r.Choices[0].Message.Content == "" {
				t.Fatalf("%s: honest call %d: %+v", label, i, r)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[len(took)/2]
	}
	quiet := calls("quiet")
	for _, n := range []int{40, 200} {
		ctx, cancel := context.WithCancel(context.Background())
		var cut atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			path := "/rpc"
			if i%2 == 1 {
				path = "/v1/chat/completions"
			}
			wg.Go(func() { slowSender(ctx, fmt.Sprintf("127.0.0.%d", 2+i%5), addr, path, &cut) })
		}
		// Every sender's headers are in and its body under way.
		time.Sleep(3 * time.Second)
		p50 := calls(fmt.Sprintf("under %d slow senders", n))
		cancel()
		wg.Wait()
		t.Logf("%d slow senders: 20 of 20 honest calls served, p50 %v (quiet %v, ×%.2f); %d sender connections cut by the server",
			n, p50.Round(time.Millisecond), quiet.Round(time.Millisecond), float64(p50)/float64(quiet), cut.Load())
	}
}

// TestBodyRateAndShare: a body that stops arriving is cut once it falls
// behind the minimum rate, freeing its slot; one client address holds at
// most its share of a pool; and JSON-RPC's pool is not the OpenAI routes'.
func TestBodyRateAndShare(t *testing.T) {
	cfg := DefaultAPIConfig("127.0.0.1:0")
	cfg.BodySlots, cfg.RPCBodySlots, cfg.BodySlotsPerClient = 2, 1, 1
	cfg.BodyMinRate, cfg.BodyGrace = 1000, 300*time.Millisecond
	read := make(chan error, 16)
	srv := httptest.NewServer(newIntake(cfg).wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		read <- err
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	// A stalled body on /rpc holds the one RPC slot...
	stalled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{")
	// ...but not the OpenAI routes' pool.
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a /v1 body while /rpc's pool is held: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := <-read; err != nil {
		t.Fatalf("the /v1 body: %v", err)
	}
	// The stalled body is cut for its rate, and its answer says why.
	_ = stalled.SetReadDeadline(time.Now().Add(30 * time.Second))
	status, err := http.ReadResponse(bufio.NewReader(stalled), nil)
	if err != nil {
		t.Fatalf("the stalled body's answer: %v", err)
	}
	msg, _ := io.ReadAll(status.Body)
	if status.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "arrived too slowly") {
		t.Fatalf("the stalled body: %d %s", status.StatusCode, msg)
	}
	if err := <-read; err == nil {
		t.Fatal("the stalled body read without error")
	}
	// Its slot is free again: an /rpc body goes through.
	resp, err = http.Post(srv.URL+"/rpc", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/rpc after the cut: %v %v", resp, err)
	}
	resp.Body.Close()
	<-read

	// One address, share 1: a second body from it is refused at once
	// while the first is mid-read, though a pool slot is free.
	g := newBodyGate(2, 1, time.Minute, bodyRate{})
	if err := g.acquire(context.Background(), "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(context.Background(), "10.0.0.1"); err == nil || !strings.Contains(err.Error(), "this client address") {
		t.Fatalf("second slot for one address: %v", err)
	}
	if err := g.acquire(context.Background(), "10.0.0.2"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	g.giveBack("10.0.0.1", true)
	if err := g.acquire(context.Background(), "10.0.0.1"); err != nil {
		t.Fatalf("after giving back: %v", err)
	}
}

// TestChunkedBodyThenLongAnswer: a handler that decodes one JSON value
// from a chunked body (it never reads the body's end) and then streams
// its answer well past the body's rate deadline keeps its client: the
// deadline ends with the reading.
func TestChunkedBodyThenLongAnswer(t *testing.T) {
	cfg := DefaultAPIConfig("127.0.0.1:0")
	cfg.BodyMinRate, cfg.BodyGrace = 1000, 200*time.Millisecond
	srv := httptest.NewServer(newIntake(cfg).wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for i := range 15 { // 1.5 s: several times the deadline the body had
			if r.Context().Err() != nil {
				return
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})))
	defer srv.Close()
	// Chunked (no Content-Length), and the body's last chunk comes a
	// moment after the JSON value: the handler's decoder returns without
	// reading it (the server then discards it as the answer starts).
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"model":"m"}`))
		time.Sleep(50 * time.Millisecond)
		_ = pw.Close()
	}()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(got), "data: [DONE]\n\n") {
		t.Fatalf("answer cut: %v after %q", err, got)
	}
}

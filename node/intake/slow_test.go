package intake

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBodyRateAndShare: a body that stops arriving is cut once it falls
// behind the minimum rate, freeing its slot; one client address holds at
// most its share of a pool; and JSON-RPC's pool is not the OpenAI routes'.
func TestBodyRateAndShare(t *testing.T) {
	cfg := Bounds{Slots: 32, RPCSlots: 8, PerClient: 8, MinRate: 16 << 10, Grace: 2 * time.Second, Timeout: 30 * time.Second} // the [api] defaults
	cfg.Slots, cfg.RPCSlots, cfg.PerClient = 2, 1, 1
	cfg.MinRate, cfg.Grace = 1000, 300*time.Millisecond
	read := make(chan error, 16)
	srv := httptest.NewServer(New(cfg).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	cfg := Bounds{Slots: 32, RPCSlots: 8, PerClient: 8, MinRate: 16 << 10, Grace: 2 * time.Second, Timeout: 30 * time.Second} // the [api] defaults
	cfg.MinRate, cfg.Grace = 1000, 200*time.Millisecond
	srv := httptest.NewServer(New(cfg).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

package intake

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/rpc"
)

// TestPerAddrLimit: over a real loopback listener, the limit+1-th open
// connection from one address gets a 429 and is closed; once one of the
// others closes, a new one is served again.
func TestPerAddrLimit(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitPerAddr(raw, 3, slog.New(slog.DiscardHandler))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	get := func() (net.Conn, string) {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return c, "write: " + err.Error()
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return c, "read: " + err.Error()
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
		return c, resp.Status + " " + string(b)
	}
	var open []net.Conn
	for range 3 {
		c, got := get()
		if got != "200 OK ok" {
			t.Fatalf("conn %d: %s", len(open), got)
		}
		open = append(open, c)
	}
	if n := ln.openFrom("127.0.0.1"); n != 3 {
		t.Fatalf("open from loopback: %d, want 3", n)
	}
	over, got := get()
	over.Close()
	if !strings.HasPrefix(got, "429 Too Many Requests too many open connections") {
		t.Fatalf("4th connection: %s", got)
	}
	open[0].Close()
	nodetest.Eventually(t, 5*time.Second, "the server to close its side", func() bool { return ln.openFrom("127.0.0.1") == 2 })
	again, got := get()
	defer again.Close()
	if got != "200 OK ok" {
		t.Fatalf("after one closed: %s", got)
	}
	for _, c := range open[1:] {
		c.Close()
	}
}

// blockingBody hands out its bytes, then blocks until released.
type blockingBody struct {
	data    *strings.Reader
	release chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if b.data.Len() > 0 {
		return b.data.Read(p)
	}
	<-b.release
	return 0, io.EOF
}

// TestBodyGate: with one slot, a body mid-read holds it and a second read
// waits the gate's bound, then fails Temporary; a handler that never reads
// (refused on its headers) never needs a slot; a body read to its declared
// length gives the slot back before its handler returns.
func TestBodyGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newBodyGate(1, 1, 2*time.Second, bodyRate{})
		type outcome struct {
			n   int
			err error
		}
		results := make(chan outcome, 4)
		reader := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			results <- outcome{len(b), err}
		}))
		slow := &blockingBody{data: strings.NewReader("partial"), release: make(chan struct{})}
		go reader.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", slow))
		synctest.Wait()
		if len(g.slots) != 1 {
			t.Fatalf("a body mid-read holds %d slots", len(g.slots))
		}

		refused := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
		rec := httptest.NewRecorder()
		refused.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("unread")))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("refused without a slot: %d", rec.Code)
		}

		start := time.Now()
		second := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("second"))
		second.RemoteAddr = "192.0.2.2:1234" // another client: the pool, not its share, is full
		reader.ServeHTTP(httptest.NewRecorder(), second)
		busy := <-results
		var tmp interface{ Temporary() bool }
		if !errors.As(busy.err, &tmp) || !tmp.Temporary() || time.Since(start) != 2*time.Second {
			t.Fatalf("second read: %v after %s", busy.err, time.Since(start))
		}

		close(slow.release)
		if first := <-results; first.err != nil || first.n != len("partial") {
			t.Fatalf("first read: %+v", first)
		}
		synctest.Wait()
		if len(g.slots) != 0 {
			t.Fatalf("slots held after the read ended: %d", len(g.slots))
		}

		exact := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, r.ContentLength)
			_, err := io.ReadFull(r.Body, b)
			results <- outcome{len(g.slots), err}
		}))
		exact.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader("0123456789")))
		if o := <-results; o.err != nil || o.n != 0 {
			t.Fatalf("after reading the declared length: %d slots held, err %v", o.n, o.err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		g.slots <- struct{}{}
		cancel()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x")).WithContext(ctx)
		reader.ServeHTTP(httptest.NewRecorder(), req)
		if o := <-results; !errors.Is(o.err, context.Canceled) {
			t.Fatalf("read with the request gone: %v", o.err)
		}
		<-g.slots
	})
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:80":                "127.0.0.1",
		"[::ffff:10.0.0.1]:443":       "10.0.0.1",
		"[2001:db8:1:2:3:4:5:6]:8080": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:1":    "2001:db8:1:2::/64",
		"[::1]:9":                     "::/64",
		"[fe80::1%eth0]:9":            "fe80::/64",
	} {
		addr, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := addrKey(addr); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if got := addrKey(&net.UnixAddr{Name: "@sock", Net: "unix"}); got != "@sock" {
		t.Errorf("unix address: %q", got)
	}
}

// TestFault: the gate's own refusal is the server's (retry), a slow or
// broken body the client's, and a body over a handler's cap too large.
func TestFault(t *testing.T) {
	_, overCap := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("too long")), 3))
	for _, c := range []struct {
		err  error
		want rpc.ReadFault
	}{
		{errBodyBusy{slots: 2, share: true}, rpc.FaultBusy},
		{fmt.Errorf("read: %w", errBodyBusy{slots: 8, wait: 1}), rpc.FaultBusy},
		{errBodySlow, rpc.FaultClient},
		{errors.New("connection reset"), rpc.FaultClient},
		{overCap, rpc.FaultTooLarge},
	} {
		if got := rpc.BodyFault(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}

// openFrom reports the open connections of one remote IP.
func (l *perAddrListener) openFrom(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[host]
}

package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// readCounter counts the bytes the API server reads from its connections.
type readCounter struct {
	net.Listener
	read atomic.Int64
}

func (l *readCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// memPeak samples the heap in use and the resident set until stop.
type memPeak struct {
	heap, rss atomic.Uint64
	stop      chan struct{}
	done      sync.WaitGroup
}

func vmRSS() uint64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func sampleMemory() *memPeak {
	m := &memPeak{stop: make(chan struct{})}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapInuse(); h > m.heap.Load() {
				m.heap.Store(h)
			}
			if r := vmRSS(); r > m.rss.Load() {
				m.rss.Store(r)
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memPeak) finish() (heap, rss uint64) {
	close(m.stop)
	m.done.Wait()
	return m.heap.Load(), m.rss.Load()
}

// floodGateway starts a gateway whose API listener counts what it reads,
// and one provider, and waits until the gateway can route to it.
func floodGateway(t *testing.T) (*Node, *readCounter) {
	t.Helper()
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counter := &readCounter{Listener: ln}
	ctx, cancel := context.WithTimeout(context.Background(), nodetest.StartTimeout)
	defer cancel()
	gw, err := New(ctx, cfg, Options{Logger: testLogger(), Listener: counter})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Start(t, "gateway", gw)
	startNode(t, testConfig(t, RoleProvider, "software", gw.Host().Addrs()[:1]))
	nodetest.Eventually(t, 30*time.Second, "the provider warm at the gateway", func() bool { return warmOffers(gw, DevnetModelName) >= 1 })
	return gw, counter
}

// slowClient is one connection without a token that declares a 4 MB body
// and sends it 4 KB every 50 ms (80 KB/s: 4 MB would take 50 s).
type slowClient struct {
	status int
	code   string
	sent   int64 // body bytes sent when the answer arrived
	closed bool  // the server closed the connection after its answer
	err    error
}

const (
	floodClients = 100
	floodBody    = 4 << 20
	floodChunk   = 4 << 10
)

func runSlowClient(addr string, headersSent *sync.WaitGroup) (res slowClient) {
	var once sync.Once
	signal := func() { once.Do(headersSent.Done) }
	defer signal()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return slowClient{err: err}
	}
	defer c.Close()
	// The headers and the first chunk go at once, so that body bytes are
	// waiting at the server when it decides.
	chunk := bytes.Repeat([]byte{' '}, floodChunk)
	head := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, floodBody)
	if _, err := c.Write(append([]byte(head), chunk...)); err != nil {
		return slowClient{err: err}
	}
	signal()
	var sent atomic.Int64
	sent.Store(floodChunk)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for sent.Load() < floodBody {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			n, err := c.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return slowClient{err: err, sent: sent.Load()}
	}
	res.sent = sent.Load()
	defer resp.Body.Close()
	res.status = resp.StatusCode
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	res.code = e.Error.Code
	// The server must drop the connection rather than drain 4 MB from it:
	// the next read ends (EOF or reset), it does not time out.
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = br.ReadByte()
	var ne net.Error
	res.closed = err != nil && !(errors.As(err, &ne) && ne.Timeout())
	return res
}

// TestIntakeFloodWithoutToken is the acceptance test of the gateway's
// intake: 100 connections without a token, each declaring a 4 MB body and
// sending it slowly, are all answered 401 after their headers, with almost
// none of their bodies sent and none read, while the heap stays far below
// what reading them would take (400 MB) and an authorised request through
// the same port is served meanwhile.
func TestIntakeFloodWithoutToken(t *testing.T) {
	gw, counter := floodGateway(t)
	addr := strings.TrimPrefix(gw.APIURL(), "http://")
	runtime.GC()
	heap0, rss0 := heapInuse(), vmRSS()
	read0 := counter.read.Load()
	mem := sampleMemory()

	var headersSent, done sync.WaitGroup
	results := make([]slowClient, floodClients)
	headersSent.Add(floodClients)
	done.Add(floodClients)
	for i := range results {
		go func() {
			defer done.Done()
			results[i] = runSlowClient(addr, &headersSent)
		}()
	}
	headersSent.Wait()
	// Served while the slow clients are still connected and sending.
	r := askRouted(t, gw, DevnetModelName, "hello during a flood")
	done.Wait()
	heap, rss := mem.finish()
	read := counter.read.Load() - read0

	var maxSent int64
	for i, c := range results {
		maxSent = max(maxSent, c.sent)
		if c.err != nil || c.status != http.StatusUnauthorized || c.code != "invalid_api_key" || !c.closed {
			t.Fatalf("client %d: status %d code %q closed %v err %v", i, c.status, c.code, c.closed, c.err)
		}
		// The answer came after the headers, not after the body: at
		// 80 KB/s a client has sent a few chunks, far from 4 MB.
		if c.sent >= floodBody/4 {
			t.Errorf("client %d had sent %d of %d body bytes before its 401", i, c.sent, floodBody)
		}
	}
	if len(r.Choices) != 1 || r.Choices[0].Message.Content == "" {
		t.Fatalf("authorised request during the flood: %+v", r)
	}
	// What the server read: headers, at most a buffer (4 KB) of each body
	// and the authorised request; reading the bodies would be 400 MB.
	if limit := int64(floodClients * 16 << 10); read > limit {
		t.Errorf("the server read %d bytes from the connections, bound %d", read, limit)
	}
	const mb = 1 << 20
	t.Logf("flood of %d × %d MB: heap in use %d MB before, peak %d MB; RSS %d MB before, peak %d MB; server read %d KB; at most %d KB of a body sent before its 401",
		floodClients, floodBody/mb, heap0/mb, heap/mb, rss0/mb, rss/mb, read>>10, maxSent>>10)
	if heap > 200*mb || heap-min(heap, heap0) > 64*mb {
		t.Errorf("heap in use peaked at %d MB (from %d MB); bound 200 MB, growth 64 MB", heap/mb, heap0/mb)
	}
	if rss-min(rss, rss0) > 200*mb {
		t.Errorf("RSS grew by %d MB during the flood; bound 200 MB", (rss-min(rss, rss0))/mb)
	}
}

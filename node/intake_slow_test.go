package node

import (
	"context"
	"fmt"
	"net"
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

package intake

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// perAddrListener refuses a connection when its remote IP already holds
// limit open ones. It counts in Accept and on the conn's first Close, so
// the count is exact whatever closes the conn (server, client, shutdown).
type perAddrListener struct {
	net.Listener
	limit int
	log   *slog.Logger
	mu    sync.Mutex
	open  map[string]int
	// refusing bounds the refusals being answered at once (each lives at
	// most a second).
	refusing chan struct{}
}

// LimitPerAddr wraps ln so that one remote address (an IPv4 address, an
// IPv6 /64) holds at most limit open connections; the next is answered
// 429 and closed.
func LimitPerAddr(ln net.Listener, limit int, log *slog.Logger) net.Listener {
	return limitPerAddr(ln, limit, log)
}

func limitPerAddr(ln net.Listener, limit int, log *slog.Logger) *perAddrListener {
	return &perAddrListener{Listener: ln, limit: limit, log: log, open: map[string]int{}, refusing: make(chan struct{}, 64)}
}

// refusal is the whole answer to a connection over the limit.
var refusal = func() string {
	const body = "too many open connections from this address\n"
	return fmt.Sprintf("HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nRetry-After: 1\r\n"+
		"Connection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

func (l *perAddrListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := addrKey(c.RemoteAddr())
		l.mu.Lock()
		full := l.open[host] >= l.limit
		if !full {
			l.open[host]++
		}
		l.mu.Unlock()
		if !full {
			return &countedConn{Conn: c, l: l, host: host}, nil
		}
		l.log.Debug("api: connection refused", "remote", host, "open", l.limit)
		select {
		case l.refusing <- struct{}{}:
			go l.refuse(c)
		default: // already refusing many: no answer, just the close
			_ = c.Close()
		}
	}
}

// refuse answers 429 and closes gracefully: half-close, then drain what the
// client already sent (briefly), so that its kernel does not get a reset
// and drop the answer unread.
func (l *perAddrListener) refuse(c net.Conn) {
	defer func() { <-l.refusing }()
	defer c.Close()                                //nolint:errcheck // a refused connection: nothing was accepted on it
	_ = c.SetDeadline(time.Now().Add(time.Second)) // a socket deadline: wall time, not the injected clock
	if _, err := io.WriteString(c, refusal); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// addrKey is the remote address a limit counts: the IP, and for IPv6 its
// /64, since one host is routinely given a whole /64 to pick from.
func addrKey(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

type countedConn struct {
	net.Conn
	l    *perAddrListener
	host string
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.l.open[c.host]--; c.l.open[c.host] <= 0 {
			delete(c.l.open, c.host)
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite keeps the TCP half-close visible through the wrapper: the
// HTTP server sends FIN before closing a conn with an unread body, so the
// client reads its answer instead of a reset.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/node/web"
)

// Intake bounds of the HTTP port. maxConnsPerAddr keeps one address from
// holding every connection (a NAT of many buyers still fits); the body
// slots and rates are [api] keys (intake.go).
const (
	maxConnsPerAddr = 128
	bodySlotWait    = 2 * time.Second
	// maxHeaderBytes: an API request's headers are a few hundred bytes;
	// the server's 1 MB default would let each connection hold a megabyte.
	maxHeaderBytes = 64 << 10
)

// apiServer is the node's one HTTP port: /healthz, /metrics, /rpc and the page.
type apiServer struct {
	n   *Node
	ln  net.Listener
	srv *http.Server
	rpc *rpc.Server
	wg  sync.WaitGroup
}

func newAPIServer(n *Node, ln net.Listener) (*apiServer, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", n.cfg.API.Listen); err != nil {
			return nil, fmt.Errorf("api.listen: %w", err)
		}
	}
	ln = limitPerAddr(ln, maxConnsPerAddr, n.log)
	a := &apiServer{n: n, ln: ln, rpc: rpc.NewServer(n.log)}
	registerMethods(a.rpc, n)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	// The node's own registry plus the process-wide default one, where
	// libp2p registers its metrics and the Go and process collectors live.
	gather := prometheus.Gatherers{n.reg, prometheus.DefaultGatherer}
	mux.Handle("GET /metrics", promhttp.HandlerFor(gather, promhttp.HandlerOpts{}))
	mux.Handle("/rpc", a.rpc)
	web.Mount(mux) // GET / and GET /assets/...: the live page, a client of /rpc
	if n.provider != nil {
		openai.NewHandler(n.provider.Backend()).Register(mux)
	} else {
		// The token is checked before the body is read: a client without
		// one costs its headers, never a body buffer.
		bs := newBuyers(n.cfg.Router.Buyers, n.cfg.API.AdminTokenSHA256)
		openai.NewHandler(openai.NewGatewayBackend(n.gateway, bs), openai.WithAuth(bs.Auth)).Register(mux)
	}
	a.srv = &http.Server{
		Handler:           newIntake(n.cfg.API).wrap(mux),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	return a, nil
}

// URL is the API's base URL.
func (a *apiServer) URL() string { return "http://" + a.ln.Addr().String() }

func (a *apiServer) Start(context.Context) error {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.n.log.Error("api server", "err", err)
		}
	}()
	return nil
}

func (a *apiServer) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Requests still running after the grace period (a flood's, or
		// streams whose buyers are gone) are cut: stopping must not wait
		// on them, and cutting them is what a stop means.
		a.n.log.Warn("api: requests still running at stop; closing their connections")
		err = a.srv.Close()
	}
	a.wg.Wait()
	return err
}

// healthz answers 200 while the node is well and 503 while its chain is
// stalled: its state is then older than it looks, and a balancer or
// supervisor should not take its answers as current.
func (a *apiServer) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body := map[string]any{
		"status":  "ok",
		"role":    a.n.cfg.Role,
		"peer_id": a.n.host.ID().String(),
		"peers":   len(a.n.host.Host().Network().Peers()),
	}
	if h := a.n.chainHealth(); h != nil {
		body["chain"] = h
		if h.Stalled {
			body["status"] = "chain_stalled"
			body["error"] = fmt.Sprintf("chain height %d has not moved since %s (stall threshold %s; %d of the persistent peers not connected)",
				h.Height, h.LastAdvance.UTC().Format(time.RFC3339), h.StallAfter, h.Missing)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}

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
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
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

// openFrom reports the open connections of one remote IP.
func (l *perAddrListener) openFrom(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[host]
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

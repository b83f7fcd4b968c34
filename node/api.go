package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tenzrod/tenzrod/node/intake"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/node/web"
)

// Intake bounds of the HTTP port. maxConnsPerAddr keeps one address from
// holding every connection (a NAT of many buyers still fits); the body
// slots and rates are [api] keys (node/intake).
const (
	maxConnsPerAddr = 128
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
	ln = intake.LimitPerAddr(ln, maxConnsPerAddr, n.log)
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
		bs := openai.NewBuyers(n.cfg.Router.BuyerAccounts(), n.cfg.API.AdminTokenSHA256).WithKeys(n.keys)
		openai.NewHandler(openai.NewGatewayBackend(n.gateway, bs), openai.WithAuth(bs.Auth)).Register(mux)
		mux.HandleFunc("GET /v1/key", bs.KeyInfoHandler)
	}
	a.srv = &http.Server{
		Handler:           intake.New(n.cfg.API.Bounds()).Wrap(mux),
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

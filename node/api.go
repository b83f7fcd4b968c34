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

	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/node/rpc"
)

// apiServer is the node's one HTTP port: /healthz, /metrics and /rpc.
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
	a := &apiServer{n: n, ln: ln, rpc: rpc.NewServer(n.log)}
	registerMethods(a.rpc, n)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	// The node's own registry plus the process-wide default one, where
	// libp2p registers its metrics and the Go and process collectors live.
	gather := prometheus.Gatherers{n.reg, prometheus.DefaultGatherer}
	mux.Handle("GET /metrics", promhttp.HandlerFor(gather, promhttp.HandlerOpts{}))
	mux.Handle("/rpc", a.rpc)
	if n.provider != nil {
		openai.NewHandler(n.provider.Backend()).Register(mux)
	} else {
		openai.NewHandler(gatewayBackend{n: n, gw: n.gateway, buyers: newBuyers(n.cfg.Router.Buyers)}).Register(mux)
	}
	a.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
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
	if err != nil {
		err = errors.Join(err, a.srv.Close())
	}
	a.wg.Wait()
	return err
}

func (a *apiServer) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status":  "ok",
		"role":    a.n.cfg.Role,
		"peer_id": a.n.host.ID().String(),
		"peers":   len(a.n.host.Host().Network().Peers()),
	})
}

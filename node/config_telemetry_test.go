package node

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/otlp"
)

// TestTelemetryConfigNamesTheKey: tracing is off by default, and each bad
// [telemetry] value is refused naming its key.
func TestTelemetryConfigNamesTheKey(t *testing.T) {
	if d := Default(RoleGateway).Telemetry; d.Enabled() || d.Protocol != otlp.ProtocolGRPC || d.ServiceName != "tenzrod" || d.SampleRatio != 1 {
		t.Fatalf("defaults %+v", d)
	}
	cases := []struct{ from, to, key string }{
		{`protocol = "grpc"`, `protocol = "udp"`, "telemetry.protocol"},
		{`sample_ratio = 1.0`, `sample_ratio = 1.5`, "telemetry.sample_ratio"},
		{`sample_ratio = 1.0`, `sample_ratio = -0.1`, "telemetry.sample_ratio"},
		{`sample_ratio = 1.0`, `sample_ratio = nan`, "telemetry.sample_ratio"},
		{`service_name = "tenzrod"`, `service_name = ""`, "telemetry.service_name"},
		{`otlp_endpoint = ""`, `otlp_endpoint = "collector:4317"`, "telemetry.otlp_endpoint"},
		{`otlp_endpoint = ""`, `otlp_endpoint = "http://collector"`, "telemetry.otlp_endpoint"},
		{`otlp_endpoint = ""`, `otlp_endpoint = "http://collector:4317/v1/traces"`, "telemetry.otlp_endpoint"},
		{`otlp_endpoint = ""`, `otlp_endpoint = "http://u:p@collector:4317"`, "telemetry.otlp_endpoint"},
		{`otlp_endpoint = ""`, `otlp_endpont = ""`, "otlp_endpont"},
	}
	for _, c := range cases {
		checkEditNamed(t, testConfig(t, RoleGateway, "software", nil), c.from, c.to, c.key)
	}
}

// collector is an OTLP trace receiver (outside the system: a real
// collector's stand-in) keeping what it was sent.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu   sync.Mutex
	reqs []*collectortrace.ExportTraceServiceRequest
}

func (c *collector) Export(_ context.Context, r *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, r)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// serveGRPC serves c over OTLP/gRPC until the test ends and returns the
// endpoint to export to.
func (c *collector) serveGRPC(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return "http://" + ln.Addr().String()
}

// spans returns each exported span's name with its resource's service.name.
func (c *collector) spans() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for _, r := range c.reqs {
		for _, rs := range r.ResourceSpans {
			svc := ""
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					svc = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					out[s.Name] = svc
				}
			}
		}
	}
	return out
}

// TestTelemetryExports: the pipeline [telemetry] builds batches spans to
// the collector over each protocol, and Stop flushes them.
func TestTelemetryExports(t *testing.T) {
	for _, protocol := range []string{otlp.ProtocolGRPC, otlp.ProtocolHTTP} {
		t.Run(protocol, func(t *testing.T) {
			col := &collector{}
			var endpoint string
			if protocol == otlp.ProtocolGRPC {
				endpoint = col.serveGRPC(t)
			} else {
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, err := io.ReadAll(r.Body)
					req := &collectortrace.ExportTraceServiceRequest{}
					if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
						http.Error(w, "bad export", http.StatusBadRequest)
						return
					}
					_, _ = col.Export(r.Context(), req)
					w.Header().Set("Content-Type", "application/x-protobuf")
					out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
					_, _ = w.Write(out)
				}))
				t.Cleanup(hs.Close)
				endpoint = hs.URL
			}
			tc := otlp.DefaultConfig()
			tc.Protocol, tc.OTLPEndpoint, tc.ServiceName = protocol, endpoint, "tenzrod-test"
			if err := tc.Validate(); err != nil {
				t.Fatal(err)
			}
			tel, err := tc.Open(context.Background(), otlp.Export{Instance: "12D3KooWtest", Version: Version, Role: string(RoleGateway), Network: "test"})
			if err != nil {
				t.Fatal(err)
			}
			_, span := tel.Provider().Tracer("test").Start(context.Background(), "chat tiny")
			span.End()
			if err := tel.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := col.spans(); got["chat tiny"] != "tenzrod-test" {
				t.Fatalf("collector received %v", got)
			}
		})
	}
}

// TestGatewayTracesToCollector: a gateway node with [telemetry] set exports
// each routed request as one trace (root, attempt, receipt, billing,
// payment record) to the collector, flushed by Stop.
func TestGatewayTracesToCollector(t *testing.T) {
	col := &collector{}
	endpoint := col.serveGRPC(t)

	dir, id := testModelDir(t)
	m := DevnetModel(dir, id)
	mkt := nodetest.Build(t, nodetest.Spec{Gateways: 1, Providers: 1}, func(t testing.TB, r nodetest.Role, _ int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		if r == nodetest.RoleGateway {
			cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
			cfg.Telemetry.OTLPEndpoint = endpoint
		} else {
			cfg.Provider.Models = []ModelConfig{m}
		}
		return newNode(t, cfg)
	})
	gw := mkt.Gateways[0]
	nodetest.Eventually(t, 30*time.Second, "provider warm at the gateway", func() bool { return warmOffers(gw, m.Name) >= 1 })
	if code, _ := postChat(t, gw, testToken, `{"model":"`+m.Name+`","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if err := gw.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := col.spans()
	for _, name := range []string{"chat " + m.Name, gateway.SpanIntake, gateway.SpanQuote, gateway.SpanAttempt,
		gateway.SpanReceipt, gateway.SpanBilling, gateway.SpanPaymentRecord} {
		if got[name] != "tenzrod" {
			t.Fatalf("span %q not exported as service tenzrod: %v", name, got)
		}
	}
}

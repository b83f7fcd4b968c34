package otlp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
)

// Config is a node's [telemetry] section: OpenTelemetry traces of the
// requests a routing node serves, one trace per request, exported over
// OTLP. Off by default.
type Config struct {
	// OTLPEndpoint is the collector's URL, scheme http (plain) or https
	// (TLS): "http://127.0.0.1:4317" for grpc, "http://127.0.0.1:4318"
	// for http, whose path defaults to /v1/traces. "" turns tracing off.
	OTLPEndpoint string `toml:"otlp_endpoint" comment:"OpenTelemetry traces of the requests this node routes (a gateway's or a validator's, not a provider's): one trace each, with a span for intake, quote and rank, every attempt, a continuation, the receipt, billing and the payment record, exported over OTLP. \"\" = off. A URL: http:// plain or https:// TLS, e.g. \"http://127.0.0.1:4317\" (grpc) or \"http://127.0.0.1:4318\" (http; the path defaults to /v1/traces)."`
	// Protocol is OTLP's transport: grpc | http (protobuf over HTTP).
	Protocol string `toml:"protocol" comment:"grpc | http"`
	// ServiceName is the service.name of every span's resource.
	ServiceName string `toml:"service_name"`
	// SampleRatio is the fraction of requests traced, 0..1; a request
	// whose parent span was sampled (or not) follows its parent.
	SampleRatio float64 `toml:"sample_ratio" comment:"Fraction of requests traced, 0..1 (a request with a sampled parent span follows its parent)."`
}

// DefaultConfig is tracing off, ready to point at a collector.
func DefaultConfig() Config {
	return Config{Protocol: ProtocolGRPC, ServiceName: "tenzrod", SampleRatio: 1}
}

// Enabled reports whether traces are exported.
func (t Config) Enabled() bool { return t.OTLPEndpoint != "" }

// Validate checks the section, naming each bad key.
func (t Config) Validate() error {
	var errs []error
	switch t.Protocol {
	case ProtocolGRPC, ProtocolHTTP:
	default:
		errs = append(errs, fmt.Errorf("telemetry.protocol: %q is not one of grpc, http", t.Protocol))
	}
	if t.OTLPEndpoint != "" {
		if _, err := t.endpoint(); err != nil {
			errs = append(errs, fmt.Errorf("telemetry.otlp_endpoint: %w", err))
		}
	}
	if t.ServiceName == "" || len(t.ServiceName) > 255 {
		errs = append(errs, fmt.Errorf("telemetry.service_name: %q must be 1..255 bytes", t.ServiceName))
	}
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		errs = append(errs, fmt.Errorf("telemetry.sample_ratio: %v outside 0..1", t.SampleRatio))
	}
	return errors.Join(errs...)
}

// endpoint parses OTLPEndpoint as the exporter's URL: host and port
// explicit, and for http the standard traces path when none is given.
func (t Config) endpoint() (*url.URL, error) {
	u, err := url.Parse(t.OTLPEndpoint)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: scheme must be http or https (e.g. http://127.0.0.1:4317)", t.OTLPEndpoint)
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" {
		return nil, fmt.Errorf("%q: needs host:port", t.OTLPEndpoint)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: no user, query or fragment", t.OTLPEndpoint)
	}
	switch {
	case t.Protocol == ProtocolGRPC && u.Path != "" && u.Path != "/":
		return nil, fmt.Errorf("%q: a grpc endpoint has no path", t.OTLPEndpoint)
	case t.Protocol == ProtocolHTTP && (u.Path == "" || u.Path == "/"):
		u.Path = "/v1/traces"
	}
	return u, nil
}

// Open builds the pipeline t describes; res names the node whose spans it
// carries (Instance, Version, Role, Network), t gives the rest.
func (t Config) Open(ctx context.Context, res Export) (*Pipeline, error) {
	u, err := t.endpoint()
	if err != nil {
		return nil, fmt.Errorf("otlp: telemetry.otlp_endpoint: %w", err)
	}
	res.Endpoint, res.Protocol, res.ServiceName, res.SampleRatio = u.String(), t.Protocol, t.ServiceName, t.SampleRatio
	return New(ctx, res)
}

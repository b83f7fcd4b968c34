package otlp

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// flushBound bounds how long Stop waits for the last spans to reach the
// collector: a collector that is down must not hold up shutdown.
const flushBound = 5 * time.Second

// Protocols of the OTLP exporter.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http"
)

// Export is where spans go and what names them: the collector's URL and
// protocol, the service, the share of traces sampled, and the resource
// attributes of the node that makes them.
type Export struct {
	Endpoint    string
	Protocol    string
	ServiceName string
	SampleRatio float64
	Instance    string // service.instance.id: the node's peer ID
	Version     string
	Role        string
	Network     string
}

// Pipeline is the node's trace pipeline: the SDK's provider with a batch
// span processor feeding the OTLP exporter. The node stops it last, after
// every part that makes spans, so Stop flushes all that is queued.
type Pipeline struct {
	tp *sdktrace.TracerProvider
}

// New builds the pipeline e describes. Nothing is dialled here: the
// exporter connects when its first batch is sent.
func New(ctx context.Context, e Export) (*Pipeline, error) {
	var exp *otlptrace.Exporter
	var err error
	switch e.Protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(e.Endpoint))
	case ProtocolHTTP:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(e.Endpoint))
	default:
		return nil, fmt.Errorf("otlp: protocol %q is not one of grpc, http", e.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("otlp: exporter: %w", err)
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(e.ServiceName),
		semconv.ServiceInstanceID(e.Instance), semconv.ServiceVersion(e.Version),
		attribute.String("tenzro.role", e.Role), attribute.String("tenzro.network", e.Network))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(e.SampleRatio))),
	)
	return &Pipeline{tp: tp}, nil
}

// Provider is the tracer provider the gateway makes its spans with.
func (p *Pipeline) Provider() trace.TracerProvider { return p.tp }

// Stop flushes the queued spans, within flushBound, and shuts the
// exporter down.
func (p *Pipeline) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, flushBound)
	defer cancel()
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("otlp: flush: %w", err)
	}
	return nil
}

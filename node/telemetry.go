package node

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
)

// telemetryFlush bounds how long Stop waits for the last spans to reach
// the collector: a collector that is down must not hold up shutdown.
const telemetryFlush = 5 * time.Second

// telemetry is the node's trace pipeline: the SDK's provider with a batch
// span processor feeding the OTLP exporter. The node stops it last, after
// every part that makes spans, so Stop flushes all that is queued.
type telemetry struct {
	tp *sdktrace.TracerProvider
}

// newTelemetry builds the pipeline [telemetry] describes; every span's
// resource names the node (instance: its peer ID), its role and network. Nothing is dialled
// here: the exporter connects when its first batch is sent.
func newTelemetry(ctx context.Context, c TelemetryConfig, role Role, network, instance string) (*telemetry, error) {
	u, err := c.endpoint()
	if err != nil {
		return nil, fmt.Errorf("node: telemetry.otlp_endpoint: %w", err)
	}
	var exp *otlptrace.Exporter
	switch c.Protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(u.String()))
	case ProtocolHTTP:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	default:
		return nil, fmt.Errorf("node: telemetry.protocol: %q is not one of grpc, http", c.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("node: telemetry: OTLP exporter: %w", err)
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(c.ServiceName),
		semconv.ServiceInstanceID(instance), semconv.ServiceVersion(Version),
		attribute.String("tenzro.role", string(role)), attribute.String("tenzro.network", network))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
	)
	return &telemetry{tp: tp}, nil
}

// Stop flushes the queued spans, within telemetryFlush, and shuts the
// exporter down.
func (t *telemetry) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, telemetryFlush)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("node: telemetry: flush: %w", err)
	}
	return nil
}

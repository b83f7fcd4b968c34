// Package otlp is the pipeline that carries the gateway's traces out of
// the process: an OpenTelemetry SDK provider with a batch span processor
// and an OTLP exporter over gRPC or HTTP.
//
// It is apart from router/gateway, which makes spans through the trace API
// only, so a gateway without telemetry does not link the SDK's exporters.
package otlp

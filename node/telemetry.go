package node

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/router/gateway/otlp"
)

// newTelemetry builds the trace pipeline [telemetry] describes; every
// span's resource names the node (instance: its peer ID), its role and
// network.
func newTelemetry(ctx context.Context, c TelemetryConfig, role Role, network, instance string) (*otlp.Pipeline, error) {
	u, err := c.endpoint()
	if err != nil {
		return nil, fmt.Errorf("node: telemetry.otlp_endpoint: %w", err)
	}
	p, err := otlp.New(ctx, otlp.Export{Endpoint: u.String(), Protocol: c.Protocol, ServiceName: c.ServiceName,
		SampleRatio: c.SampleRatio, Instance: instance, Version: Version, Role: string(role), Network: network})
	if err != nil {
		return nil, fmt.Errorf("node: telemetry: %w", err)
	}
	return p, nil
}

package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
)

// startInProcess builds the node of cfg with its log discarded and runs it
// in-process until the test ends.
func startInProcess(t *testing.T, what string, cfg node.Config) *node.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodetest.StartTimeout)
	defer cancel()
	n, err := node.New(ctx, cfg, node.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return nodetest.Start(t, what, n)
}

package main

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain keeps key-creation log lines of in-process nodes out of the
// test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

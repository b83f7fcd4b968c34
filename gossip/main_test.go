package gossip

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the key-creation log lines of the test identities so
// benchmark output stays readable.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

package consensus

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestCometLoggerWith: pairs given to With come before the call's in what
// is logged, a derived logger leaves its parent's pairs alone, and levels
// map as before (Info to Debug, Error to Warn; below the handler's level
// nothing is written).
func TestCometLoggerWith(t *testing.T) {
	var buf bytes.Buffer
	base := cometLogger{l: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	parent := base.With("module", "consensus")
	a, b := parent.With("peer", "a"), parent.With("peer", "b")
	a.Info("sent", "height", 7)
	b.Error("failed")
	parent.Debug("below the level")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %q, want two lines", buf.String())
	}
	for i, want := range []string{"level=DEBUG msg=sent module=consensus peer=a height=7", "level=WARN msg=failed module=consensus peer=b"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q, want it to hold %q", i, lines[i], want)
		}
	}
}

package consensus

import (
	"context"
	"log/slog"

	cmtlog "github.com/cometbft/cometbft/libs/log"
)

// cometLogger adapts slog to CometBFT's logger. CometBFT's Info is very
// chatty (every step of every round), so it maps to slog's Debug.
type cometLogger struct{ l *slog.Logger }

var _ cmtlog.Logger = cometLogger{}

func (c cometLogger) Debug(msg string, kv ...any) {
	c.l.Log(context.Background(), slog.LevelDebug-4, msg, kv...)
}
func (c cometLogger) Info(msg string, kv ...any)  { c.l.Debug(msg, kv...) }
func (c cometLogger) Error(msg string, kv ...any) { c.l.Warn(msg, kv...) }
func (c cometLogger) With(kv ...any) cmtlog.Logger {
	return cometLogger{l: c.l.With(kv...)}
}

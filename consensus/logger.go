package consensus

import (
	"context"
	"log/slog"

	cmtlog "github.com/cometbft/cometbft/libs/log"
)

// cometLogger adapts slog to CometBFT's logger. CometBFT's Info is very
// chatty (every step of every round), so it maps to slog's Debug.
//
// With only remembers its pairs: CometBFT calls it for every vote it
// considers sending to every peer (pickVoteToSend), and slog's With
// formats the pairs into a new handler each time, whether anything is
// logged or not; that was ~5 % of an idle validator's CPU.
type cometLogger struct {
	l  *slog.Logger
	kv []any
}

var _ cmtlog.Logger = cometLogger{}

func (c cometLogger) Debug(msg string, kv ...any) { c.log(slog.LevelDebug-4, msg, kv) }
func (c cometLogger) Info(msg string, kv ...any)  { c.log(slog.LevelDebug, msg, kv) }
func (c cometLogger) Error(msg string, kv ...any) { c.log(slog.LevelWarn, msg, kv) }

func (c cometLogger) With(kv ...any) cmtlog.Logger {
	return cometLogger{l: c.l, kv: append(c.kv[:len(c.kv):len(c.kv)], kv...)}
}

// log writes msg with the With pairs before the call's, when level is
// enabled.
func (c cometLogger) log(level slog.Level, msg string, kv []any) {
	ctx := context.Background()
	if !c.l.Enabled(ctx, level) {
		return
	}
	if len(c.kv) > 0 {
		kv = append(c.kv[:len(c.kv):len(c.kv)], kv...)
	}
	c.l.Log(ctx, level, msg, kv...)
}

// Package logbridge routes the logs of libp2p (gologshim, slog), of the
// IPFS libraries that still log through go-log (zap: the DHT, the pebble
// datastore) and of OpenTelemetry (logr) into the process's slog handler,
// so a node writes one log stream in one format. CometBFT is bridged by
// consensus's own adapter, gossipsub by gossip (Logger).
package logbridge

import (
	"context"
	"log/slog"
	"sort"

	"github.com/go-logr/logr"
	golog "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/gologshim"
	"go.opentelemetry.io/otel"
	"go.uber.org/zap/zapcore"
)

// Install sends libp2p's, go-log's and OpenTelemetry's records to h. Levels
// stay what they were without the bridge: GOLOG_LOG_LEVEL (default error)
// per libp2p/IPFS subsystem; OpenTelemetry's errors (its V(1) and above map
// below slog's Info). Only the output changes. Call it once, before the
// libp2p host and the tracer start.
func Install(h slog.Handler) {
	gologshim.SetDefaultHandler(&systemLevel{h: h, min: gologshim.ConfigFromEnv().LevelForSystem("")})
	golog.SetPrimaryCore(&zapCore{h: h})
	otel.SetLogger(logr.FromSlogHandler(h))
}

// Logger is a logger for a library's subsystem that takes an *slog.Logger
// option (go-libp2p-pubsub's WithLogger, whose default writes to stderr on
// its own): records go to h, tagged logger=system, at or above the
// subsystem's GOLOG_LOG_LEVEL as the library's default logger would.
func Logger(h slog.Handler, system string) *slog.Logger {
	lvl := gologshim.ConfigFromEnv().LevelForSystem(system)
	return slog.New(&systemLevel{h: h.WithAttrs([]slog.Attr{slog.String("logger", system)}), min: lvl})
}

// systemLevel drops records below its subsystem's GOLOG_LOG_LEVEL; gologshim
// names the subsystem with a "logger" attribute when it first logs.
type systemLevel struct {
	h   slog.Handler
	min slog.Level
}

func (s *systemLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= s.min && s.h.Enabled(ctx, l)
}

func (s *systemLevel) Handle(ctx context.Context, r slog.Record) error {
	return s.h.Handle(ctx, r)
}

func (s *systemLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	lvl := s.min
	for _, a := range attrs {
		if a.Key == "logger" {
			lvl = gologshim.ConfigFromEnv().LevelForSystem(a.Value.String())
		}
	}
	return &systemLevel{h: s.h.WithAttrs(attrs), min: lvl}
}

func (s *systemLevel) WithGroup(name string) slog.Handler {
	return &systemLevel{h: s.h.WithGroup(name), min: s.min}
}

// zapCore is a zapcore.Core writing to an slog handler. go-log filters by
// subsystem level before its primary core, so the core passes what it gets.
type zapCore struct {
	h slog.Handler
}

func zapLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// attrs converts zap fields to slog attributes, in key order.
func attrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		out = append(out, slog.Any(k, enc.Fields[k]))
	}
	return out
}

func (c *zapCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), zapLevel(l))
}

func (c *zapCore) With(fields []zapcore.Field) zapcore.Core {
	return &zapCore{h: c.h.WithAttrs(attrs(fields))}
}

func (c *zapCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *zapCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, zapLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (c *zapCore) Sync() error { return nil }

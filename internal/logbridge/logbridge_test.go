package logbridge

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	golog "github.com/ipfs/go-log/v2"
	"github.com/libp2p/go-libp2p/gologshim"
)

func TestInstallRoutesToSlog(t *testing.T) {
	var buf bytes.Buffer
	Install(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))

	golog.Logger("bridgetest-zap").Errorw("zap says", "peer", "p1", "n", 3)
	golog.Logger("bridgetest-zap").Info("zap info below error")
	l := gologshim.Logger("bridgetest-shim")
	l.Error("shim says", "addr", "a1")
	l.Info("shim info below error")
	ps := Logger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), "bridgetest-pubsub")
	ps.Error("pubsub says", "id", "p2")
	ps.Info("pubsub info below error")

	out := buf.String()
	for _, want := range []string{
		`level=ERROR msg="zap says" logger=bridgetest-zap n=3 peer=p1`,
		`level=ERROR msg="shim says" logger=bridgetest-shim addr=a1`,
		`level=ERROR msg="pubsub says" logger=bridgetest-pubsub id=p2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("logbridge: output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "below error") {
		t.Errorf("logbridge: a record below GOLOG_LOG_LEVEL's default passed:\n%s", out)
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/router"
)

func startTestNode(t *testing.T, role node.Role, boot []string, model ...string) *node.Node {
	t.Helper()
	cfg := node.Default(role)
	cfg.Home = t.TempDir()
	cfg.Network = "shelltest"
	cfg.API.Listen = "127.0.0.1:0"
	cfg.P2P.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	cfg.P2P.Bootstrap = boot
	cfg.Identity.Backend = "software"
	if role == node.RoleProvider {
		cfg.Provider.Region = "FR"
		cfg.Provider.AnnounceInterval = time.Second
		cfg.Provider.Models = []node.ModelConfig{node.DevnetModel(model[0], model[1])}
	}
	return startInProcess(t, string(role), cfg)
}

// TestShellAgainstRealNodes runs the shell's one-shot commands against a
// real validator that sees a real provider.
func TestShellAgainstRealNodes(t *testing.T) {
	v := startTestNode(t, node.RoleValidator, nil)
	modelDir := filepath.Join(t.TempDir(), "model")
	modelID, err := node.EnsureDevnetModel(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	p := startTestNode(t, node.RoleProvider, v.Host().Addrs()[:1], modelDir, modelID)
	deadline := time.Now().Add(20 * time.Second)
	// Up and its model warm: "providers" shows the model's state, and a
	// provider is up (heartbeating) while its model is still warming.
	warm := func() bool {
		for _, o := range v.Table().Offers(node.DevnetModelName) {
			if o.Peer == p.Host().ID() && o.Status == router.StatusUp && o.State == gossip.StateWarm {
				return true
			}
		}
		return false
	}
	for !warm() {
		if time.Now().After(deadline) {
			t.Fatal("provider never up and warm at the validator")
		}
		time.Sleep(100 * time.Millisecond)
	}
	run := func(cmd string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := shell.Run(ctx, shell.Config{API: v.APIURL(), HistoryFile: os.DevNull, Out: &out, Err: &errOut}, cmd); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, errOut.String())
		}
		return out.String()
	}
	machine := p.Identity().MachineID().String()
	for cmd, wants := range map[string][]string{
		"info":                        {v.Host().ID().String(), "validator", "software"},
		"providers":                   {machine[:8], "up", "FR", "claimed", "tenzro-devnet(warm)"},
		"topics":                      {"/tenzro/shelltest/heartbeat/1", "/tenzro/shelltest/announce/1"},
		"peers":                       {p.Host().ID().String()},
		"tail heartbeat -n 2":         {"accept", "heartbeat"},
		"dht providers " + modelID:    {p.Host().ID().String()},
		"quote tenzro-devnet -out 10": {"PRICE", p.Host().ID().String()[len(p.Host().ID().String())-6:]},
		"rpc tenzro_nodeInfo":         {`"role": "validator"`},
	} {
		out := run(cmd)
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%q output lacks %q:\n%s", cmd, w, out)
			}
		}
	}
	var out, errOut bytes.Buffer
	err = shell.Run(context.Background(), shell.Config{API: v.APIURL(), HistoryFile: os.DevNull, Out: &out, Err: &errOut}, "frobnicate")
	if err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command: %v", err)
	}
}

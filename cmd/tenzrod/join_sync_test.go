package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
)

// TestSyncFlagsApply: --chain-rpc, --trust-height and --trust-hash are
// refused naming the flag unless state sync could use them; a given
// trusted block is written as is, without asking the servers; servers
// that cannot be reached refuse the setup.
func TestSyncFlagsApply(t *testing.T) {
	const hash = "9039a0cb7b8da3ed3cd9dc23ca0e6de45070481fe8071085df1c3d9f3469b446"
	// Nothing listens on ports 1 and 2 of the loopback: refused at once.
	two := []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}
	for _, c := range []struct {
		name string
		f    syncFlags
		want string
	}{
		{"one server", syncFlags{rpc: two[:1]}, "--chain-rpc: give at least two"},
		{"no scheme", syncFlags{rpc: []string{"127.0.0.1:1", "127.0.0.1:2"}}, "want http://host:port"},
		{"trust without servers", syncFlags{trustHeight: 5, trustHash: hash}, "need --chain-rpc"},
		{"height without hash", syncFlags{rpc: two, trustHeight: 5}, "go together"},
		{"hash without height", syncFlags{rpc: two, trustHash: hash}, "go together"},
		{"unreachable servers", syncFlags{rpc: two}, "0 of 2 RPC servers answered"},
	} {
		var cc consensus.ChainConfig
		err := c.f.apply(io.Discard, &cc, "tenzro-test")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		if len(cc.StateSyncRPC) != 0 {
			t.Errorf("%s: refused, yet the chain section was set: %+v", c.name, cc)
		}
	}
	cc := consensus.DefaultChainConfig(false)
	var out bytes.Buffer
	if err := (syncFlags{rpc: two, trustHeight: 7, trustHash: hash}).apply(&out, &cc, "tenzro-test"); err != nil {
		t.Fatal(err)
	}
	if len(cc.StateSyncRPC) != 2 || cc.TrustHeight != 7 || cc.TrustHash != strings.ToUpper(hash) || !strings.Contains(out.String(), "trusting block 7") {
		t.Fatalf("given trust applied as %+v, told %q", cc, out.String())
	}
	if err := cc.Validate(consensus.ChainFollower); err != nil {
		t.Fatalf("the section written: %v", err)
	}
	cc = consensus.ChainConfig{}
	if err := (syncFlags{}).apply(&out, &cc, "tenzro-test"); err != nil || cc.StateSyncRPC != nil {
		t.Fatalf("no flags: %+v, %v", cc, err)
	}
}

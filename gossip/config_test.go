package gossip

import (
	"strings"
	"testing"
	"time"
)

// TestConfigValidate: the [gossip] defaults are valid on a network, and a
// bad window is refused naming its key.
func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Network = "test"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, w := range []time.Duration{0, time.Hour} {
		bad := c
		bad.Window = w
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "gossip.window:") {
			t.Errorf("window %s: %v, want gossip.window named", w, err)
		}
	}
	if err := DefaultConfig().Validate(); err == nil {
		t.Error("no network accepted")
	}
}

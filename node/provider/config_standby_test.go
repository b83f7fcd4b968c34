package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference"
)

// TestStandbyConfigErrorsNameTheKey: every bad [provider.standby] value is
// refused naming its key; the defaults (off) and an enabled section pass.
func TestStandbyConfigErrorsNameTheKey(t *testing.T) {
	on := validConfig()
	on.Standby.Enabled = true
	if err := on.Validate(); err != nil {
		t.Fatalf("standby enabled with defaults: %v", err)
	}
	for key, mutate := range map[string]func(*StandbyConfig){
		"provider.standby.fee_per_hour":   func(c *StandbyConfig) { c.Enabled, c.FeePerHour = true, 0 },
		"provider.standby.key_file":       func(c *StandbyConfig) { c.Enabled, c.KeyFile = true, "" },
		"provider.standby.state_dir":      func(c *StandbyConfig) { c.Enabled, c.StateDir = true, "" },
		"provider.standby.max_sessions":   func(c *StandbyConfig) { c.MaxSessions = 0 },
		"provider.standby.claim_interval": func(c *StandbyConfig) { c.ClaimInterval = time.Millisecond },
	} {
		c := validConfig()
		mutate(&c.Standby)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v does not name the key", key, err)
		}
	}
}

// TestConversationOfARawPrompt: without chat messages the state sealed
// after a turn is the prompt's tokens followed by the answer's.
func TestConversationOfARawPrompt(t *testing.T) {
	got := conversation(nil, inference.GenerateRequest{Prompt: "x"}, "", inference.Result{Prompt: []int{1, 2}, Tokens: []int{3}})
	if len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("raw prompt state %v, want prompt then answer", got)
	}
}

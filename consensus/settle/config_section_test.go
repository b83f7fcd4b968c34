package settle

import (
	"strings"
	"testing"
	"time"
)

// TestSectionValidate: the [settle] defaults are valid and make valid
// outbox and collector configs; each bad value is refused naming its key.
func TestSectionValidate(t *testing.T) {
	good := DefaultConfig()
	if err := good.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if err := good.Outbox("x").Validate(); err != nil {
		t.Fatalf("outbox: %v", err)
	}
	if err := good.Collector("x").Validate(); err != nil {
		t.Fatalf("collector: %v", err)
	}
	for key, mod := range map[string]func(*Config){
		"settle.validity":         func(c *Config) { c.Validity = 1 },
		"settle.grace":            func(c *Config) { c.Grace = -time.Second },
		"settle.collect_interval": func(c *Config) { c.CollectInterval = time.Millisecond },
		"settle.collect_batch":    func(c *Config) { c.CollectBatch = 0 },
	} {
		bad := good
		mod(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%s: %v, want it named", key, err)
		}
	}
}

package identity

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// TestConfigValidate: the [identity] defaults are valid, and each bad
// value is refused naming its key.
func TestConfigValidate(t *testing.T) {
	good := DefaultConfig(hwkey.BackendSoftware)
	if err := good.Validate("dir"); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if hc := good.HWKey("dir"); hc.Backend != hwkey.BackendSoftware || hc.Dir != "dir" || hc.Device != hwkey.DefaultDevice {
		t.Fatalf("hwkey config: %+v", hc)
	}
	for _, c := range []struct {
		key string
		mod func(*Config)
		dir string
	}{
		{"identity.backend", func(c *Config) { c.Backend = "hsm" }, "dir"},
		{"identity: ", func(c *Config) {}, ""},
		{"identity.session_ttl", func(c *Config) { c.SessionTTL = time.Second }, "dir"},
		{"identity.session_ttl", func(c *Config) { c.SessionTTL = 1000 * time.Hour }, "dir"},
	} {
		bad := good
		c.mod(&bad)
		if err := bad.Validate(c.dir); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%+v: %v, want %s named", bad, err, c.key)
		}
	}
}

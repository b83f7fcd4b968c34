package validator

import (
	"strings"
	"testing"
)

// TestFileConfigValidate: bad [[validator.models]] entries are refused
// naming their keys; a good one is not.
func TestFileConfigValidate(t *testing.T) {
	c := FileConfig{Models: []ModelConfig{{Name: "ok", Dir: "m", ID: strings.Repeat("ab", 32)}, {Name: "nodir"}, {Dir: "x", ID: "zz"}}}
	err := c.Validate()
	for _, key := range []string{"validator.models[1].dir", "validator.models[2].id"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("validate: %v, want it to name %s", err, key)
		}
	}
	if err != nil && strings.Contains(err.Error(), "validator.models[0]") {
		t.Errorf("a good entry refused: %v", err)
	}
}

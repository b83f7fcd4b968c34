package validator

import (
	"strings"
	"testing"
	"time"
)

// TestNewNeedsItsDependencies: the role refuses to assemble without the
// chain, the accounts and the gateway it measures through, and refuses a
// negative probe interval.
func TestNewNeedsItsDependencies(t *testing.T) {
	if _, err := New(Config{}, Deps{}); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("no deps: %v", err)
	}
	if _, err := New(Config{ProbeInterval: -time.Second}, Deps{}); err == nil || !strings.Contains(err.Error(), "probe interval") {
		t.Fatal("a negative probe interval was accepted")
	}
}

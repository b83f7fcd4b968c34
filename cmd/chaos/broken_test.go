//go:build chaosbroken

package main

import (
	"strings"
	"testing"
)

// TestChaosBroken proves the checker can fail: with -tags chaosbroken
// the soak runs a tenzrod whose restarted gateway forgets the first record
// it signs (the buyer holds it, nobody settles it), and the same short
// run must end FAIL, exit 1, naming the lost record.
//
//	go test -tags chaosbroken -count=1 -run TestChaosBroken ./cmd/chaos
func TestChaosBroken(t *testing.T) {
	out, code := soak(t)
	if code != 1 || !strings.HasPrefix(lastLine(out), "chaos: FAIL: ") {
		t.Fatalf("exit %d, verdict %q; want exit 1 and FAIL", code, lastLine(out))
	}
	if !strings.Contains(out, "settled 0 times, want exactly once") {
		t.Fatalf("the violations do not name the lost record:\n%s", out)
	}
}

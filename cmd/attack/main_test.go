package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunBadInput: without a devnet or --api, with a broken devnet.json,
// a missing key file or a bad --only, attack stops before any traffic
// with an error naming what is wrong.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken")
	if err := os.MkdirAll(broken, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "devnet.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", filepath.Join(dir, "none")}, "no --api given and no devnet"},
		{[]string{"--dir", broken}, "devnet.json"},
		{[]string{"--dir", dir, "--api", "http://127.0.0.1:1", "--buyer-key", filepath.Join(dir, "missing.key")}, "--buyer-key"},
		{[]string{"--dir", dir, "--api", "http://127.0.0.1:1"}, "--buyer-key is required"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("attack %q: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

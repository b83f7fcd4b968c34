package consensus

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPruneWAL keeps the head and the newest rotated files of the
// consensus WAL, whatever their count or digits, and touches nothing else.
func TestPruneWAL(t *testing.T) {
	dir := t.TempDir()
	names := []string{"wal", "wal.000", "wal.001", "wal.002", "wal.009", "wal.1000", "wal.x", "other.000"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := pruneWAL(dir, "wal", 2)
	if err != nil || removed != 3 {
		t.Fatalf("removed %d, %v; want 3", removed, err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"other.000", "wal", "wal.009", "wal.1000", "wal.x"}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	if removed, err := pruneWAL(dir, "wal", 2); err != nil || removed != 0 {
		t.Fatalf("second prune: %d, %v", removed, err)
	}
	if removed, err := pruneWAL(filepath.Join(dir, "missing"), "wal", 2); err != nil || removed != 0 {
		t.Fatalf("no wal directory: %d, %v", removed, err)
	}
}

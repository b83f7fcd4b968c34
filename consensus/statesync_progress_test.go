package consensus

import (
	"strings"
	"testing"
	"time"
)

// TestSyncProgressString: each phase of a join reads as what the user
// waits on: the snapshot offer, the chunks, then the blocks behind with
// the estimate.
func TestSyncProgressString(t *testing.T) {
	for _, c := range []struct {
		p    SyncProgress
		want string
	}{
		{SyncProgress{StateSync: true, TrustHeight: 40}, "waiting for a snapshot offer (trusted block 40)"},
		{SyncProgress{StateSync: true, SnapshotHeight: 60, Chunks: 5, ChunksApplied: 2}, "restoring the snapshot at block 60, chunk 2 of 5"},
		{SyncProgress{StateSync: true, SnapshotHeight: 60, Restored: true, Height: 70, Target: 100, Remaining: 3 * time.Second},
			"at block 70, 30 behind, about 3s left"},
		{SyncProgress{Height: 70}, "at block 70"},
	} {
		if got := c.p.String(); !strings.Contains(got, c.want) {
			t.Errorf("%+v reads %q, want %q", c.p, got, c.want)
		}
	}
	if b := (SyncProgress{Height: 120, Target: 100}).Behind(); b != 0 {
		t.Errorf("ahead of the target: %d behind", b)
	}
}

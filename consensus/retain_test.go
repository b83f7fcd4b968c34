package consensus_test

import (
	"context"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// TestRetainHeight: the last retain_blocks blocks are kept, never past
// the newest snapshot nor within the evidence age; with snapshots on and
// none taken, or retain_blocks 0, every block is kept.
func TestRetainHeight(t *testing.T) {
	for _, c := range []struct {
		name                             string
		height, blocks, evidence, newest int64
		snapshots                        bool
		want                             int64
	}{
		{"keep all", 5000, 0, 0, 4000, true, 0},
		{"no snapshots", 5000, 100, 0, 0, false, 4901},
		{"snapshot not yet taken", 5000, 100, 0, 0, true, 0},
		{"capped by the snapshot", 5000, 100, 0, 4000, true, 4000},
		{"snapshot newer than the window", 5000, 2000, 0, 4000, true, 3001},
		{"evidence age", 5000, 100, 1000, 4000, true, 4000},
		{"evidence age below the snapshot", 5000, 100, 2000, 4000, true, 3000},
		{"young chain", 50, 100, 0, 0, false, 0},
		{"evidence reaches genesis", 5000, 100, 100000, 4000, true, 0},
	} {
		got := consensus.RetainHeight(c.height, c.blocks, c.evidence, c.newest, c.snapshots)
		if got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// commitRetains commits n empty blocks on c, waiting for any snapshot
// each starts, and returns the RetainHeight each Commit reported.
func commitRetains(t *testing.T, c *chain, n int) []int64 {
	t.Helper()
	var got []int64
	for range n {
		if _, err := c.app.FinalizeBlock(context.Background(), &abci.FinalizeBlockRequest{Height: c.app.Height() + 1, Time: c.Tick()}); err != nil {
			t.Fatal(err)
		}
		r, err := c.app.Commit(context.Background(), &abci.CommitRequest{})
		if err != nil {
			t.Fatal(err)
		}
		c.app.Ledger().WaitSnapshot()
		got = append(got, r.RetainHeight)
	}
	return got
}

// TestCommitRetainHeight: Commit reports RetainHeight by the rules, from
// the ledger's newest snapshot, and never lowers it once reported.
func TestCommitRetainHeight(t *testing.T) {
	newRetaining := func(evidence int64) *chain {
		c := newChain(t, "", genesisTime, ledgertest.Params(), 1)
		if err := c.app.Ledger().SetSnapshots(3, 2); err != nil {
			t.Fatal(err)
		}
		c.app.SetRetain(4, evidence)
		return c
	}
	// Heights 1..8: nothing before the first snapshot (3, taken in the
	// background after Commit 3 answered); then min(h-3, newest).
	c := newRetaining(0)
	if got, want := commitRetains(t, c, 8), []int64{0, 0, 0, 0, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("retain heights %v, want %v", got, want)
	}
	// The rules now give min(9-3, 6, 9-6) = 3, but CometBFT refuses a
	// lower retain height than it was given: 5 stays.
	c.app.SetRetain(4, 6)
	if got := commitRetains(t, c, 1); got[0] != 5 {
		t.Fatalf("retain height after the evidence age grew: %d, want 5 kept", got[0])
	}
	// A validator keeping 6 blocks of evidence: min(h-3, newest, h-6).
	v := newRetaining(6)
	if got, want := commitRetains(t, v, 9), []int64{0, 0, 0, 0, 0, 0, 0, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("validator retain heights %v, want %v", got, want)
	}
}

package consensus

import (
	"path/filepath"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"
)

// TestEvidenceAgeBlocks: a validator keeps the larger of the genesis's
// evidence max age in blocks and its max age in time at the block time.
func TestEvidenceAgeBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "genesis.json")
	p := cmttypes.DefaultConsensusParams()
	p.Evidence.MaxAgeNumBlocks, p.Evidence.MaxAgeDuration = 100, time.Minute
	g := cmttypes.GenesisDoc{ChainID: "retain", GenesisTime: time.Unix(1e9, 0), ConsensusParams: p, InitialHeight: 1}
	if err := g.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		block time.Duration
		want  int64
	}{{time.Second, 100}, {0, 100}, {100 * time.Millisecond, 600}} {
		if got, err := evidenceAgeBlocks(path, c.block); err != nil || got != c.want {
			t.Errorf("block time %s: %d, %v; want %d", c.block, got, err, c.want)
		}
	}
	if _, err := evidenceAgeBlocks(filepath.Join(t.TempDir(), "none.json"), 0); err == nil {
		t.Error("a missing genesis gave an evidence age")
	}
}

package consensus

import (
	"fmt"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// retention is what the App's Commit needs to tell CometBFT the oldest
// block to keep.
type retention struct {
	blocks   int64 // [chain] retain_blocks; 0 keeps every block
	evidence int64 // blocks evidence may reach back (validators); 0 = none needed
	// CometBFT refuses (and logs, every block) a retain height below its
	// oldest block or below one it was given before: floor is the height
	// a snapshot restored this node at (no block before it was ever here),
	// last the height reported before.
	floor, last int64
}

// SetRetain makes Commit ask CometBFT to keep only the last blocks blocks
// (0 keeps all), and never the evidenceBlocks before the head: a validator
// passes its genesis's evidence max age so the evidence it verifies or
// proposes still finds its blocks; a follower passes 0.
func (a *App) SetRetain(blocks, evidenceBlocks int64) {
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	a.retain.blocks, a.retain.evidence = max(0, blocks), max(0, evidenceBlocks)
}

func (a *App) retainHeight() int64 {
	newest, snapshots := a.l.NewestSnapshot()
	h := a.l.Height()
	a.snapMu.Lock()
	defer a.snapMu.Unlock()
	r := &a.retain
	if r.blocks == 0 {
		return 0
	}
	got := RetainHeight(h, r.blocks, r.evidence, newest, snapshots)
	if got <= r.floor {
		return 0
	}
	r.last = max(r.last, got)
	return r.last
}

// RetainHeight is the oldest block a node keeps after committing height:
// the last retainBlocks blocks, but never past the newest snapshot (a node
// restored from it block-syncs from there, from this node's blocks) nor
// within evidenceBlocks of the head. With snapshots on and none taken yet
// every block is kept. 0 keeps every block, as CometBFT reads it.
func RetainHeight(height, retainBlocks, evidenceBlocks, newestSnapshot int64, snapshots bool) int64 {
	if retainBlocks <= 0 || snapshots && newestSnapshot <= 0 {
		return 0
	}
	r := height - retainBlocks + 1
	if snapshots {
		r = min(r, newestSnapshot)
	}
	if evidenceBlocks > 0 {
		r = min(r, height-evidenceBlocks)
	}
	if r <= 1 {
		return 0
	}
	return r
}

// configureSnapshots applies cfg's snapshot and retention settings to
// app; a validator's retention keeps the genesis's evidence max age.
func configureSnapshots(app *App, cfg Config, genesisFile string) error {
	keep := cfg.SnapshotKeep
	if keep == 0 {
		keep = ledger.DefaultSnapshotKeep
	}
	if err := app.Ledger().SetSnapshots(cfg.SnapshotInterval, keep); err != nil {
		return fmt.Errorf("consensus: %w", err)
	}
	var evidence int64
	if cfg.RetainBlocks > 0 && !cfg.Follower {
		var err error
		if evidence, err = evidenceAgeBlocks(genesisFile, cfg.BlockTime); err != nil {
			return err
		}
	}
	app.SetRetain(cfg.RetainBlocks, evidence)
	return nil
}

// evidenceAgeBlocks is how many blocks back evidence under the genesis at
// path may reach. CometBFT expires evidence only once it is older than
// both the max age in blocks and the max age in time, so the time is
// turned into blocks at blockTime (0 = 1s), the shortest a block takes:
// the larger of the two, never too few.
func evidenceAgeBlocks(path string, blockTime time.Duration) (int64, error) {
	g, err := cmttypes.GenesisDocFromFile(path)
	if err != nil {
		return 0, fmt.Errorf("consensus: read genesis: %w", err)
	}
	ev := cmttypes.DefaultConsensusParams().Evidence
	if g.ConsensusParams != nil {
		ev = g.ConsensusParams.Evidence
	}
	if blockTime <= 0 {
		blockTime = time.Second
	}
	return max(ev.MaxAgeNumBlocks, int64(ev.MaxAgeDuration/blockTime)), nil
}

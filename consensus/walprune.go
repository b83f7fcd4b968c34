package consensus

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// walKeep is how many rotated files of CometBFT's consensus WAL a node
// keeps beside the head. CometBFT rotates the WAL every 10 MB and deletes
// old files only past 1 GB, while a restart replays from the newest
// "end of height" marker, which the head or the file before it holds (10 MB
// is hundreds of blocks): a devnet's eight nodes wrote 150 MB of WAL in ten
// minutes, growing towards 8 GB. One rotated file is enough for that
// replay and keeps a node's WAL near 20 MB.
const walKeep = 1

// walPruneEvery is how often the rotated WAL files are pruned.
const walPruneEvery = time.Minute

// pruneWAL removes the rotated WAL files in dir (head.NNN) beyond the
// newest keep; it returns how many it removed.
func pruneWAL(dir, head string, keep int) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("consensus: prune wal: %w", err)
	}
	type rotated struct {
		index int
		name  string
	}
	var files []rotated
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), head+".")
		if !ok || e.IsDir() {
			continue
		}
		if i, err := strconv.Atoi(suffix); err == nil && i >= 0 {
			files = append(files, rotated{i, e.Name()})
		}
	}
	if len(files) <= keep {
		return 0, nil
	}
	slices.SortFunc(files, func(a, b rotated) int { return a.index - b.index })
	removed := 0
	for _, f := range files[:len(files)-keep] {
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !os.IsNotExist(err) {
			return removed, fmt.Errorf("consensus: prune wal: %w", err)
		}
		removed++
	}
	return removed, nil
}

// pruneWALEvery prunes the WAL at walFile's rotated files until ctx ends.
func pruneWALEvery(ctx context.Context, walFile string, every time.Duration, log *slog.Logger) {
	dir, head := filepath.Split(walFile)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := pruneWAL(dir, head, walKeep); err != nil {
			log.Warn("consensus: wal not pruned", "err", err)
		} else if n > 0 {
			log.Debug("consensus: pruned rotated wal files", "removed", n, "kept", walKeep)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package ledger_test

import (
	"testing"
	"time"
)

// BenchmarkSnapshot takes and restores a snapshot of a state of 5,000
// accounts created by transfers (plus the payers and genesis records), in
// 10 MB chunks.
func BenchmarkSnapshot(b *testing.B) {
	c := newSnapChain(b, "", 50, 0, 1, 10<<20)
	for range 100 {
		c.mustApply(c.transfers(50)...)
	}
	m, err := c.l.SnapshotNow()
	if err != nil {
		b.Fatal(err)
	}
	var size int
	for i := range m.Chunks {
		chunk, err := c.l.SnapshotChunk(m.Height, uint32(i)) //nolint:gosec // a chunk index
		if err != nil {
			b.Fatal(err)
		}
		size += len(chunk)
	}
	b.Run("take", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.l.SnapshotNow(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "bytes")
		b.ReportMetric(float64(m.Pairs), "pairs")
	})
	// A block of 50 transfers alone, and while a snapshot of the state is
	// being taken beside it: snapshotting must not hold blocks up.
	b.Run("block", func(b *testing.B) {
		for b.Loop() {
			c.mustApply(c.transfers(50)...)
		}
	})
	b.Run("block-during-snapshot", func(b *testing.B) {
		var blocks time.Duration
		n := 0
		for b.Loop() {
			done := make(chan error, 1)
			go func() { _, err := c.l.SnapshotNow(); done <- err }()
			start := time.Now()
			c.mustApply(c.transfers(50)...)
			blocks += time.Since(start)
			n++
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(blocks.Nanoseconds())/float64(n), "block-ns")
	})
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			restoreInto(b, c.l, m)
		}
		b.ReportMetric(float64(size), "bytes")
	})
}

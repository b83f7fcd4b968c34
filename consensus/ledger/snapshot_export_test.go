package ledger

// SetSnapshotChunkMax makes snapshots cut chunks at n bytes, so a test's
// small state spans several.
func (l *Ledger) SetSnapshotChunkMax(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.snap.chunkMax = n
}

// AppendSnapshotPair is the chunk encoding of one pair.
func AppendSnapshotPair(b, key, val []byte) []byte { return appendPair(b, key, val) }

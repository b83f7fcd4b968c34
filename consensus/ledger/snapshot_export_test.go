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

// SnapshotNow takes a snapshot of the last commit in the caller's
// goroutine (SetSnapshots must have been called).
func (l *Ledger) SnapshotNow() (SnapshotMeta, error) {
	l.mu.Lock()
	h, root := l.store.Height(), l.store.Root()
	l.mu.Unlock()
	return l.takeSnapshot(l.snap.store, h, root)
}

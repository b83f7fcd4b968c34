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
	at, root := Stamp{Height: l.store.Height(), Time: l.meta.Time}, l.store.Root()
	l.mu.Unlock()
	return l.takeSnapshot(l.snap.store, at, root)
}

package consensus

import (
	"errors"
	"testing"

	dbm "github.com/cometbft/cometbft-db"
)

// TestGuardedDBAfterClose: a batch made before Close cannot write after
// it, nor can direct writes or new iterators; reads find nothing.
func TestGuardedDBAfterClose(t *testing.T) {
	g := &guardedDB{DB: dbm.NewMemDB()}
	if err := g.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	b := g.NewBatch()
	if err := b.Set([]byte("k2"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(); !errors.Is(err, errDBClosed) {
		t.Errorf("batch write after close: %v", err)
	}
	if err := g.Set([]byte("k"), []byte("w")); !errors.Is(err, errDBClosed) {
		t.Errorf("set after close: %v", err)
	}
	if _, err := g.Iterator(nil, nil); !errors.Is(err, errDBClosed) {
		t.Errorf("iterator after close: %v", err)
	}
	if err := g.NewBatch().WriteSync(); !errors.Is(err, errDBClosed) {
		t.Errorf("new batch after close: %v", err)
	}
	if v, err := g.Get([]byte("k")); v != nil || err != nil {
		t.Errorf("get after close: %q %v", v, err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

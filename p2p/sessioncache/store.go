package sessioncache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Store keeps small records by ID across restarts: a successor's
// accepted states (Holder) and a gateway's session table. Put replaces.
type Store interface {
	Put(id string, b []byte) error
	Delete(id string) error
	// All returns every record; one that cannot be read is left out.
	All() (map[string][]byte, error)
}

// DirStore is a Store of one file per record in a directory, each
// written whole (to a temporary file, synced, then renamed), so a crash
// leaves either the old record or the new one. Records are few (a
// bounded table) and written once a turn, so files suffice.
type DirStore struct{ dir string }

// maxRecord bounds a record read back: a frame plus its statement.
const maxRecord = 2 * MaxFrameSize

// OpenDirStore makes dir (mode 0700) and returns its store.
func OpenDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sessioncache: store: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

// A file is named by the SHA-256 of its ID (an ID is arbitrary UTF-8 and
// may outgrow a file name) and holds uvarint(len(ID)) ‖ ID ‖ record.
func (d *DirStore) path(id string) string {
	h := sha256.Sum256([]byte(id))
	return filepath.Join(d.dir, hex.EncodeToString(h[:])+".rec")
}

// Put writes record id.
func (d *DirStore) Put(id string, b []byte) error {
	if len(b) > maxRecord {
		return fmt.Errorf("sessioncache: store: record of %d bytes exceeds %d", len(b), maxRecord)
	}
	f, err := os.CreateTemp(d.dir, "tmp-*")
	if err != nil {
		return fmt.Errorf("sessioncache: store: %w", err)
	}
	tmp := f.Name()
	rec := binary.AppendUvarint(nil, uint64(len(id)))
	rec = append(append(rec, id...), b...)
	_, err = f.Write(rec)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.path(id))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sessioncache: store: put: %w", err)
	}
	return nil
}

// Delete removes record id; an absent one is no error.
func (d *DirStore) Delete(id string) error {
	if err := os.Remove(d.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sessioncache: store: delete: %w", err)
	}
	return nil
}

// All reads every record; temporary files a crash left are removed.
func (d *DirStore) All() (map[string][]byte, error) {
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: store: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, "tmp-") {
			_ = os.Remove(filepath.Join(d.dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".rec") || e.IsDir() {
			continue
		}
		if info, err := e.Info(); err != nil || info.Size() > maxRecord+binary.MaxVarintLen64+MaxSessionIDLen {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d.dir, name))
		if err != nil {
			continue
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			continue
		}
		out[string(b[k:k+int(n)])] = b[k+int(n):]
	}
	return out, nil
}

package keyfile

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxSize bounds the size of a key file read from disk.
const MaxSize = 64 << 10

// ErrPermissions is returned when an existing key file is readable or
// writable by users other than its owner.
var ErrPermissions = errors.New("keyfile: file is accessible by group or others (chmod 600)")

// LoadOrCreate returns the contents of the PEM block of type blockType in
// path. If path does not exist, gen is called, its output is written to
// path (mode 0600, parent directory created with mode 0700) and returned,
// and created is true. Creation is atomic: the file is written under a
// temporary name and hard-linked into place, so a concurrent opener either
// sees no file or the complete one, and when two race, both return the
// winner's contents.
func LoadOrCreate(path, blockType string, gen func() ([]byte, error)) (data []byte, created bool, err error) {
	data, err = Load(path, blockType)
	if err == nil {
		return data, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	fresh, err := gen()
	if err != nil {
		return nil, false, fmt.Errorf("keyfile: generate %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("keyfile: create directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, false, fmt.Errorf("keyfile: create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) //nolint:errcheck // after a successful link this only drops the temporary name
	enc := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: fresh})
	if err := writeAndSync(tmp, enc); err != nil {
		return nil, false, fmt.Errorf("keyfile: write %s: %w", tmpName, err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			data, err = Load(path, blockType)
			return data, false, err
		}
		return nil, false, fmt.Errorf("keyfile: install %s: %w", path, err)
	}
	return fresh, true, nil
}

func writeAndSync(f *os.File, b []byte) error {
	if err := f.Chmod(0o600); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Write(b); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// Load reads the PEM block of type blockType from path. The file must exist,
// be a regular file of at most MaxSize bytes, not be accessible by group or
// others, and hold exactly one PEM block of the expected type.
func Load(path, blockType string) ([]byte, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the key file the node is configured with
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only: the bytes are in hand
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("keyfile: %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o", ErrPermissions, path, fi.Mode().Perm())
	}
	if fi.Size() > MaxSize {
		return nil, fmt.Errorf("keyfile: %s is larger than %d bytes", path, MaxSize)
	}
	raw := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, fmt.Errorf("keyfile: read %s: %w", path, err)
	}
	block, rest := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("keyfile: %s holds no PEM block", path)
	}
	if block.Type != blockType {
		return nil, fmt.Errorf("keyfile: %s holds a %q block, want %q", path, block.Type, blockType)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("keyfile: %s has unexpected PEM headers", path)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("keyfile: %s has trailing data after the PEM block", path)
	}
	return block.Bytes, nil
}

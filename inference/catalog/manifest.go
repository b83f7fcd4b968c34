package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// ChunkSize is the size of a chunk leaf.
const ChunkSize = 1 << 20

const headerTag = "tenzro/model-manifest/v1\x00"

// Hash is a SHA-256 digest, shown as hex.
type Hash [32]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText encodes the hash as hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes a hex hash.
func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) != 64 {
		return fmt.Errorf("catalog: hash must be 64 hex digits, got %d", len(b))
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// ParseHash decodes a hex model ID.
func ParseHash(s string) (Hash, error) {
	var h Hash
	err := h.UnmarshalText([]byte(s))
	return h, err
}

// File is one manifest entry.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Chunks []Hash `json:"chunks"`
}

// Manifest lists every file of a model directory with its chunk digests.
type Manifest struct {
	Version   int    `json:"version"`
	ChunkSize int64  `json:"chunk_size"`
	Files     []File `json:"files"`
	Root      Hash   `json:"root"`
}

// Build hashes every file under dir (streaming) and returns the manifest and
// its Merkle root, the model ID.
func Build(dir string) (*Manifest, Hash, error) {
	paths, err := list(dir)
	if err != nil {
		return nil, Hash{}, err
	}
	m := &Manifest{Version: 1, ChunkSize: ChunkSize}
	buf := make([]byte, ChunkSize)
	for _, p := range paths {
		f, err := hashFile(filepath.Join(dir, filepath.FromSlash(p)), p, buf, nil)
		if err != nil {
			return nil, Hash{}, err
		}
		m.Files = append(m.Files, f)
	}
	m.Root = m.ComputeRoot()
	return m, m.Root, nil
}

// list returns the slash-separated relative paths of the regular files under
// dir, sorted.
func list(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%v)", rel, d.Type())
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	sort.Strings(paths)
	return paths, nil
}

// hashFile streams one file, calling check (if not nil) on each chunk digest.
func hashFile(path, rel string, buf []byte, check func(i int, off int64, h Hash) error) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("catalog: %w", err)
	}
	defer fh.Close() //nolint:errcheck // read-only: a close error loses nothing
	out := File{Path: rel}
	for {
		n, err := io.ReadFull(fh, buf)
		if n > 0 {
			h := Hash(sha256.Sum256(buf[:n]))
			if check != nil {
				if err := check(len(out.Chunks), out.Size, h); err != nil {
					return out, err
				}
			}
			out.Chunks = append(out.Chunks, h)
			out.Size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("catalog: %s: %w", rel, err)
		}
	}
}

// LeafData returns the leaves of the manifest's Merkle tree, in order.
func (m *Manifest) LeafData() [][]byte {
	leaves := [][]byte{binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte(headerTag), uint64(m.ChunkSize)), uint64(len(m.Files)))}
	for i, f := range m.Files {
		b := []byte{1}
		b = binary.BigEndian.AppendUint32(b, uint32(len(f.Path)))
		b = append(b, f.Path...)
		b = binary.BigEndian.AppendUint64(b, uint64(f.Size))
		b = binary.BigEndian.AppendUint64(b, uint64(len(f.Chunks)))
		leaves = append(leaves, b)
		for j, h := range f.Chunks {
			n := min(m.ChunkSize, f.Size-int64(j)*m.ChunkSize)
			c := []byte{2}
			c = binary.BigEndian.AppendUint64(c, uint64(i))
			c = binary.BigEndian.AppendUint64(c, uint64(j))
			c = binary.BigEndian.AppendUint64(c, uint64(n))
			leaves = append(leaves, append(c, h[:]...))
		}
	}
	return leaves
}

// LeafHashes returns the RFC 6962 leaf hashes.
func (m *Manifest) LeafHashes() [][]byte {
	data := m.LeafData()
	out := make([][]byte, len(data))
	for i, d := range data {
		out[i] = rfc6962.DefaultHasher.HashLeaf(d)
	}
	return out
}

var factory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// rootOf returns the RFC 6962 root of the given leaf hashes.
func rootOf(hashes [][]byte) Hash {
	if len(hashes) == 0 {
		return Hash(rfc6962.DefaultHasher.EmptyRoot())
	}
	r := factory.NewEmptyRange(0)
	for _, h := range hashes {
		// Appending to a range that starts at 0 cannot fail.
		_ = r.Append(h, nil)
	}
	root, _ := r.GetRootHash(nil)
	return Hash(root)
}

// ComputeRoot returns the Merkle root of the manifest's contents (it does
// not trust m.Root).
func (m *Manifest) ComputeRoot() Hash { return rootOf(m.LeafHashes()) }

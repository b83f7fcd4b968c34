package catalog

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// verifyManifest checks dir against a published manifest whose root is
// want, naming the first file or chunk that differs: the tests use it to
// show that every byte's chunk is pinned by the manifest. Production checks
// a model with Verify, which trusts no published manifest. It stops reading
// at the first bad chunk.
func verifyManifest(dir string, m *Manifest, want Hash) error {
	if m.ChunkSize != ChunkSize || m.Version != 1 {
		return fmt.Errorf("catalog: manifest version %d chunk size %d not supported", m.Version, m.ChunkSize)
	}
	if got := m.ComputeRoot(); got != want {
		return fmt.Errorf("catalog: the manifest's root is %s, want %s: %w", got, want, ErrMismatch)
	}
	paths, err := list(dir)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, p := range paths {
		have[p] = true
	}
	for _, f := range m.Files {
		if !have[f.Path] {
			return fmt.Errorf("catalog: %s: missing file %s: %w", dir, f.Path, ErrMismatch)
		}
		delete(have, f.Path)
	}
	for p := range have {
		return fmt.Errorf("catalog: %s: unexpected file %s: %w", dir, p, ErrMismatch)
	}
	buf := make([]byte, ChunkSize)
	for _, f := range m.Files {
		got, err := hashFile(filepath.Join(dir, filepath.FromSlash(f.Path)), f.Path, buf, func(i int, off int64, h Hash) error {
			if i >= len(f.Chunks) {
				return fmt.Errorf("catalog: %s is longer than its %d bytes: %w", f.Path, f.Size, ErrMismatch)
			}
			if h != f.Chunks[i] {
				return fmt.Errorf("catalog: %s chunk %d (bytes %d..%d) has SHA-256 %s, want %s: %w",
					f.Path, i, off, min(off+ChunkSize, f.Size)-1, h, f.Chunks[i], ErrMismatch)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if got.Size != f.Size {
			return fmt.Errorf("catalog: %s has %d bytes, want %d: %w", f.Path, got.Size, f.Size, ErrMismatch)
		}
	}
	return nil
}

// chunkProof returns the leaf index, the tree size and the RFC 6962
// inclusion proof of chunk c of file i, so the chunk can be checked against
// the root on its own (verifyChunk).
func (m *Manifest) chunkProof(file, chunk int) (index, size uint64, p [][]byte, err error) {
	if file < 0 || file >= len(m.Files) || chunk < 0 || chunk >= len(m.Files[file].Chunks) {
		return 0, 0, nil, fmt.Errorf("catalog: no chunk %d of file %d", chunk, file)
	}
	index = 1
	for i := 0; i < file; i++ {
		index += 1 + uint64(len(m.Files[i].Chunks))
	}
	index += 1 + uint64(chunk)
	hashes := m.LeafHashes()
	size = uint64(len(hashes))
	nodes, err := proof.Inclusion(index, size)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("catalog: %w", err)
	}
	hs := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		lo, hi := id.Coverage()
		h := rootOf(hashes[lo:hi])
		hs[i] = h[:]
	}
	p, err = nodes.Rehash(hs, rfc6962.DefaultHasher.HashChildren)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("catalog: %w", err)
	}
	return index, size, p, nil
}

// verifyChunk checks one chunk's bytes against the model ID, given its leaf
// position (file index, chunk index, chunk length are part of the leaf) and
// an inclusion proof from chunkProof.
func verifyChunk(root Hash, fileIndex, chunkIndex int, data []byte, index, size uint64, p [][]byte) error {
	m := &Manifest{ChunkSize: ChunkSize, Files: make([]File, fileIndex+1)}
	m.Files[fileIndex] = File{Size: int64(chunkIndex)*ChunkSize + int64(len(data)), Chunks: make([]Hash, chunkIndex+1)}
	m.Files[fileIndex].Chunks[chunkIndex] = Hash(sha256.Sum256(data))
	leaves := m.LeafData()
	leaf := leaves[len(leaves)-1]
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, size, rfc6962.DefaultHasher.HashLeaf(leaf), p, root[:]); err != nil {
		return fmt.Errorf("catalog: chunk %d of file %d: %w: %w", chunkIndex, fileIndex, ErrMismatch, err)
	}
	return nil
}

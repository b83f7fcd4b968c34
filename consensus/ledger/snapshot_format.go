package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ethereum/go-ethereum/common"
)

// SnapshotFormat is the version of the snapshot layout below. A node
// offered any other format refuses it, so a change of layout needs a new
// number.
//
// Format 1: the chunks carry the state's key/value pairs in key order,
// each as uvarint(len key) ‖ key ‖ uvarint(len value) ‖ value, and no pair
// spans two chunks. The node encoding of the trie is not part of it: the
// restorer rebuilds the trie from the pairs, so the app hash it ends with
// is computed, never taken from the sender.
//
// Format 2: as 1, with the block time in the metadata: the state no
// longer holds it (Stamp).
const SnapshotFormat uint32 = 2

// SnapshotChunkMax bounds a chunk's size (CometBFT carries a chunk in one
// p2p message).
const SnapshotChunkMax = 10 << 20

// SnapshotMeta describes one snapshot: the height, block time and state
// root it is of, how many pairs it holds and the SHA-256 of every chunk, in
// order. Its encoding is the ABCI snapshot's metadata, and the SHA-256 of
// that encoding is the snapshot's hash.
//
// The light client vouches for the app hash at the height, not for Time:
// Time is the sender's word. A restored node uses it only as its latest
// block's time until the next block (mempool checks, queries at that one
// height), and refuses one before the chain's genesis.
type SnapshotMeta struct {
	Height  int64
	Time    int64 // the block's, unix seconds
	AppHash common.Hash
	Pairs   uint64
	Chunks  [][32]byte
}

// snapshotMetaFixed is the encoding's length before the chunk hashes:
// height (8) ‖ time (8) ‖ app hash (32) ‖ pairs (8) ‖ chunk count (4).
const snapshotMetaFixed = 8 + 8 + 32 + 8 + 4

// Encode is the metadata's binary encoding.
func (m SnapshotMeta) Encode() []byte {
	b := make([]byte, 0, snapshotMetaFixed+32*len(m.Chunks))
	b = binary.BigEndian.AppendUint64(b, nonNeg(m.Height))
	b = binary.BigEndian.AppendUint64(b, nonNeg(m.Time))
	b = append(b, m.AppHash[:]...)
	b = binary.BigEndian.AppendUint64(b, m.Pairs)
	b = binary.BigEndian.AppendUint32(b, uint32(min(len(m.Chunks), math.MaxUint32))) //nolint:gosec // bounded by min
	for _, h := range m.Chunks {
		b = append(b, h[:]...)
	}
	return b
}

// Hash is the SHA-256 of the encoding: the ABCI snapshot's hash.
func (m SnapshotMeta) Hash() []byte {
	h := sha256.Sum256(m.Encode())
	return h[:]
}

// DecodeSnapshotMeta decodes metadata received from a peer: the length
// must match the chunk count exactly, the height be positive, the time
// not past the largest and at least one chunk be named.
func DecodeSnapshotMeta(b []byte) (SnapshotMeta, error) {
	var m SnapshotMeta
	if len(b) < snapshotMetaFixed {
		return m, fmt.Errorf("ledger: snapshot metadata is %d bytes, want at least %d", len(b), snapshotMetaFixed)
	}
	h, ok := heightOf(b[:8])
	if !ok || h < 1 {
		return m, fmt.Errorf("ledger: snapshot metadata names height %x", b[:8])
	}
	at, ok := heightOf(b[8:16])
	if !ok {
		return m, fmt.Errorf("ledger: snapshot metadata names time %x", b[8:16])
	}
	m.Height, m.Time = h, at
	m.AppHash = common.BytesToHash(b[16:48])
	m.Pairs = binary.BigEndian.Uint64(b[48:56])
	n := int(binary.BigEndian.Uint32(b[56:60]))
	if n == 0 {
		return m, errors.New("ledger: snapshot metadata names no chunks")
	}
	if rest := len(b) - snapshotMetaFixed; rest != 32*n {
		return m, fmt.Errorf("ledger: snapshot metadata holds %d bytes of chunk hashes for %d chunks", rest, n)
	}
	m.Chunks = make([][32]byte, n)
	for i := range m.Chunks {
		copy(m.Chunks[i][:], b[snapshotMetaFixed+32*i:])
	}
	return m, nil
}

// appendPair appends one key/value pair in the chunk encoding.
func appendPair(b, key, val []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

// pairSize is the encoded size of a pair.
func pairSize(key, val []byte) int {
	return binary.PutUvarint(make([]byte, binary.MaxVarintLen64), uint64(len(key))) + len(key) +
		binary.PutUvarint(make([]byte, binary.MaxVarintLen64), uint64(len(val))) + len(val)
}

// DecodeSnapshotChunk calls f with every pair of a chunk, in order. Keys
// and values are never empty (the trie stores no empty value) and alias
// chunk.
func DecodeSnapshotChunk(chunk []byte, f func(key, val []byte) error) error {
	for off := 0; off < len(chunk); {
		key, n, err := chunkField(chunk[off:])
		if err != nil {
			return fmt.Errorf("ledger: snapshot chunk at byte %d: key: %w", off, err)
		}
		off += n
		val, n, err := chunkField(chunk[off:])
		if err != nil {
			return fmt.Errorf("ledger: snapshot chunk at byte %d: value: %w", off, err)
		}
		off += n
		if err := f(key, val); err != nil {
			return err
		}
	}
	return nil
}

// chunkField reads one length-prefixed, non-empty field.
func chunkField(b []byte) ([]byte, int, error) {
	u, n := binary.Uvarint(b)
	switch {
	case n <= 0:
		return nil, 0, errors.New("bad length prefix")
	case n != len(binary.AppendUvarint(nil, u)):
		return nil, 0, errors.New("length prefix not in its shortest form")
	case u == 0:
		return nil, 0, errors.New("empty")
	case u > SnapshotChunkMax:
		return nil, 0, fmt.Errorf("length %d past a chunk's largest", u)
	}
	if l := int(u); l <= len(b)-n {
		return b[n : n+l], n + l, nil
	}
	return nil, 0, fmt.Errorf("length %d past the chunk's end", u)
}

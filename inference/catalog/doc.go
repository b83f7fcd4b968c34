// Package catalog identifies a model by what is on disk: the model ID is the
// RFC 6962 Merkle root (SHA-256, github.com/transparency-dev/merkle) over a
// manifest of every file in the model directory.
//
// Leaves, in order:
//
//	0:         "tenzro/model-manifest/v1\x00" ‖ u64 chunk size ‖ u64 file count
//	per file:  0x01 ‖ u32 path length ‖ slash-separated relative path ‖ u64 size ‖ u64 chunk count
//	per chunk: 0x02 ‖ u64 file index ‖ u64 chunk index ‖ u64 chunk length ‖ SHA-256(chunk bytes)
//
// Files are sorted by path; each file's chunk leaves follow its file leaf.
// Chunks are ChunkSize (1 MiB) bytes, the last one shorter; an empty file
// has no chunk. Integers are big-endian. Every byte of every file is
// therefore covered, and a single chunk can be checked against the root with
// an RFC 6962 inclusion proof without the rest of the file (the tests prove
// every chunk so). Directories are hashed streaming, one chunk in memory at
// a time. Symbolic links and other non-regular files are refused.
package catalog

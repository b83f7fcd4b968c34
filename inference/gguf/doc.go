// Package gguf writes GGUF v3 model files and loads them through
// github.com/gpustack/gguf-parser-go.
//
// The writer (Writer) produces the files tenzrod generates itself: a header,
// typed metadata key/value pairs, tensor infos and 32-byte aligned tensor
// data, with tensors in F32, F16 or Q8_0. Tensor rows are produced on demand
// by a callback, so a large model is never held in memory while it is written.
//
// The reader (Open) asks gguf-parser-go for the header, metadata and tensor
// infos, then checks every tensor it reports (known type, sane shape,
// block-aligned rows, data inside the file) before handing out typed
// accessors. Tensor data is read by offset, one tensor at a time, into a
// buffer sized from the checked tensor info, so a malformed or hostile file
// yields an error, never a panic, and allocations stay within a small
// multiple of the file size. Panics inside the parser (it panics on some
// malformed inputs, e.g. a zero alignment) are recovered into errors, and
// files carrying split.tensors.count are refused before parsing because the
// parser preallocates from that value unchecked.
//
// Strings are the one thing the reader does not take from the parser: it
// trims whitespace from every string it reads (v0.28.x, ReadString), which
// empties whitespace vocabulary tokens such as Gemma's "\n" or "  " (making
// them collide) and cuts the newlines a chat template ends with, where
// llama.cpp reads both byte for byte. A token ID off by one such token makes
// an honest answer look false in a dispute, so Open walks the header once
// more itself (rawstr.go): it skips fixed-width values and keeps metadata
// keys, string values, string arrays and tensor names exactly, checking each
// length against the bytes left before allocating. The parser stays the
// authority for everything else, and the two must agree on every entry
// (count, order, and each name up to the parser's trimming) or the file is
// refused. The walk reads GGUF v2 and v3 only and refuses nested arrays,
// as llama.cpp does.
package gguf

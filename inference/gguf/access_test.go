package gguf

import (
	"maps"
	"slices"
)

// keys returns the metadata keys in sorted order, for tests that walk every
// key; the loaders look keys up by name.
func (f *File) keys() []string { return slices.Sorted(maps.Keys(f.meta)) }

// cols is the row length (the innermost dimension).
func (t TensorInfo) cols() int { return int(t.Shape[0]) }

// rows is the number of rows (product of all dimensions but the first).
func (t TensorInfo) rows() int { return int(t.Elems / int64(t.Shape[0])) }

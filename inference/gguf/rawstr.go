package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// GGUF metadata value types, as the file encodes them.
const (
	vtString = 8
	vtArray  = 9
	vtMax    = 12
)

// fixedSize is the encoded size of a fixed-width metadata value type, 0
// for strings and arrays.
var fixedSize = [vtMax + 1]uint64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// exact holds the header's strings byte for byte, as llama.cpp reads them:
// the parser trims every string it reads (see the package doc).
type exact struct {
	keys    []string            // metadata keys in file order
	strs    map[string]string   // string values
	arrs    map[string][]string // string-array values
	tensors []string            // tensor names in file order
}

// rawReader reads the little-endian header, refusing any length that runs
// past the end of the file before allocating for it.
type rawReader struct {
	r    *bufio.Reader
	pos  int64
	size int64
	b    [8]byte
}

func (r *rawReader) left() uint64 { return uint64(r.size - r.pos) }

func (r *rawReader) read(n int) ([]byte, error) {
	if uint64(n) > r.left() {
		return nil, io.ErrUnexpectedEOF
	}
	if _, err := io.ReadFull(r.r, r.b[:n]); err != nil {
		return nil, err
	}
	r.pos += int64(n)
	return r.b[:n], nil
}

func (r *rawReader) u32() (uint32, error) {
	b, err := r.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *rawReader) u64() (uint64, error) {
	b, err := r.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *rawReader) skip(n uint64) error {
	if n > r.left() {
		return io.ErrUnexpectedEOF
	}
	if _, err := r.r.Discard(int(n)); err != nil {
		return err
	}
	r.pos += int64(n)
	return nil
}

func (r *rawReader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > r.left() {
		return "", fmt.Errorf("string of %d bytes runs past the end of the file", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return "", err
	}
	r.pos += int64(n)
	return string(b), nil
}

// count reads an item count and checks that n items of at least min bytes
// each fit in the rest of the file.
func (r *rawReader) count(what string, min uint64) (uint64, error) {
	n, err := r.u64()
	if err != nil {
		return 0, err
	}
	if n > r.left()/min {
		return 0, fmt.Errorf("%d %s cannot fit in the %d bytes left", n, what, r.left())
	}
	return n, nil
}

// readExact walks the header of a GGUF v2/v3 file (the versions llama.cpp
// reads) and keeps its strings exactly. Every length is checked against the
// bytes left before anything is allocated, so no allocation exceeds the
// file's size (a string array's slice headers aside, bounded at 2× it).
func readExact(ra io.ReaderAt, size int64) (*exact, error) {
	r := &rawReader{r: bufio.NewReaderSize(io.NewSectionReader(ra, 0, size), 1<<16), size: size}
	magic, err := r.u32()
	if err != nil {
		return nil, err
	}
	if magic != Magic {
		return nil, errors.New("not a little-endian GGUF file")
	}
	if v, err := r.u32(); err != nil {
		return nil, err
	} else if v != 2 && v != 3 {
		return nil, fmt.Errorf("GGUF version %d is not supported (want 2 or 3)", v)
	}
	nt, err := r.u64()
	if err != nil {
		return nil, err
	}
	// A key needs 8 length bytes and 4 type bytes, plus one value byte.
	nkv, err := r.count("metadata entries", 13)
	if err != nil {
		return nil, err
	}
	e := &exact{strs: map[string]string{}, arrs: map[string][]string{}}
	for i := uint64(0); i < nkv; i++ {
		if err := e.readKV(r); err != nil {
			return nil, fmt.Errorf("metadata entry %d: %w", i, err)
		}
	}
	// A tensor info is at least a name length, a dimension count, a type
	// and an offset.
	if nt > r.left()/24 {
		return nil, fmt.Errorf("%d tensors cannot fit in the %d bytes left", nt, r.left())
	}
	for i := uint64(0); i < nt; i++ {
		name, err := r.str()
		if err != nil {
			return nil, fmt.Errorf("tensor %d name: %w", i, err)
		}
		nd, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		if nd > MaxDims {
			return nil, fmt.Errorf("tensor %d has %d dimensions, at most %d", i, nd, MaxDims)
		}
		if err := r.skip(uint64(nd)*8 + 4 + 8); err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		e.tensors = append(e.tensors, name)
	}
	return e, nil
}

func (e *exact) readKV(r *rawReader) error {
	key, err := r.str()
	if err != nil {
		return err
	}
	typ, err := r.u32()
	if err != nil {
		return err
	}
	e.keys = append(e.keys, key)
	switch {
	case typ == vtString:
		s, err := r.str()
		if err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		e.strs[key] = s
	case typ == vtArray:
		return e.readArray(r, key)
	case typ <= vtMax:
		return r.skip(fixedSize[typ])
	default:
		return fmt.Errorf("%q: unknown value type %d", key, typ)
	}
	return nil
}

func (e *exact) readArray(r *rawReader, key string) error {
	et, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case et == vtString:
		n, err := r.count("strings", 8)
		if err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		ss := make([]string, n)
		for i := range ss {
			if ss[i], err = r.str(); err != nil {
				return fmt.Errorf("%q item %d: %w", key, i, err)
			}
		}
		e.arrs[key] = ss
		return nil
	case et == vtArray || et > vtMax:
		// llama.cpp reads no nested arrays either.
		return fmt.Errorf("%q: arrays of type %d are not supported", key, et)
	}
	n, err := r.count("items", fixedSize[et])
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	return r.skip(n * fixedSize[et])
}

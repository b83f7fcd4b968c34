package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// GGUF constants used by the writer.
const (
	Magic            = 0x46554747 // "GGUF" little-endian
	Version          = 3
	DefaultAlignment = 32
	maxNameLen       = 64
)

// metadata value types (gguf_type).
const (
	kvUint8   = 0
	kvInt8    = 1
	kvUint16  = 2
	kvInt16   = 3
	kvUint32  = 4
	kvInt32   = 5
	kvFloat32 = 6
	kvBool    = 7
	kvString  = 8
	kvArray   = 9
	kvUint64  = 10
	kvInt64   = 11
	kvFloat64 = 12
)

// RowFunc fills dst (one row of shape[0] elements) with the values of row
// number row of a tensor; rows are numbered over all dimensions but the first.
type RowFunc func(row int, dst []float32)

type kv struct {
	key   string
	write func(w *encoder)
}

type wtensor struct {
	name   string
	typ    Type
	shape  []uint64
	fill   RowFunc
	size   uint64
	offset uint64
}

// Writer assembles a GGUF v3 file: metadata, then tensors whose rows are
// produced on demand while the file is written.
type Writer struct {
	kvs     []kv
	tensors []*wtensor
	names   map[string]bool
}

// NewWriter returns an empty writer.
func NewWriter() *Writer { return &Writer{names: map[string]bool{}} }

func (w *Writer) set(key string, fn func(e *encoder)) {
	for i := range w.kvs {
		if w.kvs[i].key == key {
			w.kvs[i].write = fn
			return
		}
	}
	w.kvs = append(w.kvs, kv{key: key, write: fn})
}

// SetString sets a string metadata value.
func (w *Writer) SetString(key, v string) {
	w.set(key, func(e *encoder) { e.u32(kvString); e.str(v) })
}

// SetUint32 sets a uint32 metadata value.
func (w *Writer) SetUint32(key string, v uint32) {
	w.set(key, func(e *encoder) { e.u32(kvUint32); e.u32(v) })
}

// SetFloat32 sets a float32 metadata value.
func (w *Writer) SetFloat32(key string, v float32) {
	w.set(key, func(e *encoder) { e.u32(kvFloat32); e.u32(math.Float32bits(v)) })
}

// SetBool sets a bool metadata value.
func (w *Writer) SetBool(key string, v bool) {
	b := uint8(0)
	if v {
		b = 1
	}
	w.set(key, func(e *encoder) { e.u32(kvBool); e.u8(b) })
}

// SetStrings sets an array-of-strings metadata value.
func (w *Writer) SetStrings(key string, vs []string) {
	setArray(w, key, kvString, vs, (*encoder).str)
}

// SetFloat32s sets an array-of-float32 metadata value.
func (w *Writer) SetFloat32s(key string, vs []float32) {
	setArray(w, key, kvFloat32, vs, func(e *encoder, v float32) { e.u32(math.Float32bits(v)) })
}

// SetInt32s sets an array-of-int32 metadata value.
func (w *Writer) SetInt32s(key string, vs []int32) {
	setArray(w, key, kvInt32, vs, func(e *encoder, v int32) { e.u32(uint32(v)) })
}

// setArray sets an array metadata value of element type elem, each element
// written by put. vs is copied: the caller may reuse it before the file is
// written.
func setArray[T any](w *Writer, key string, elem uint32, vs []T, put func(*encoder, T)) {
	vs = slices.Clone(vs)
	w.set(key, func(e *encoder) {
		e.u32(kvArray)
		e.u32(elem)
		e.u64(uint64(len(vs)))
		for _, v := range vs {
			put(e, v)
		}
	})
}

// AddTensor declares a tensor of the given type and shape (shape[0] is the
// row length, the innermost dimension). fill is called once per row, in
// order, while the file is written.
func (w *Writer) AddTensor(name string, typ Type, shape []uint64, fill RowFunc) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("gguf: tensor name %q must be 1..%d bytes", name, maxNameLen)
	}
	if w.names[name] {
		return fmt.Errorf("gguf: duplicate tensor %q", name)
	}
	if !typ.Supported() {
		return fmt.Errorf("gguf: tensor %q: cannot write type %v", name, typ)
	}
	if fill == nil {
		return fmt.Errorf("gguf: tensor %q: nil row function", name)
	}
	block, bsize, _ := typ.layout()
	_, size, err := tensorBytes(shape, block, bsize)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if shape[0] > 1<<30 {
		return fmt.Errorf("gguf: tensor %q: row length %d too large", name, shape[0])
	}
	w.names[name] = true
	w.tensors = append(w.tensors, &wtensor{name: name, typ: typ, shape: append([]uint64(nil), shape...), fill: fill, size: size})
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// WriteTo writes the whole file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	w.SetUint32("general.alignment", DefaultAlignment)
	e := &encoder{w: bufio.NewWriterSize(out, 1<<20)}
	e.u32(Magic)
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.key)
		kv.write(e)
	}
	var off uint64
	for _, t := range w.tensors {
		t.offset = off
		off = alignUp(off+t.size, DefaultAlignment)
		e.str(t.name)
		e.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(t.offset)
	}
	e.pad(DefaultAlignment)
	dataStart := e.n
	var row []float32
	var buf []byte
	for _, t := range w.tensors {
		e.pad(DefaultAlignment)
		if got := uint64(e.n - dataStart); got != t.offset && e.err == nil {
			return e.n, fmt.Errorf("gguf: tensor %q at data offset %d, want %d", t.name, got, t.offset)
		}
		cols := int(t.shape[0])
		block, bsize, _ := t.typ.layout()
		rows := int(t.size / (uint64(cols) / block * bsize))
		if cap(row) < cols {
			row = make([]float32, cols)
		}
		row = row[:cols]
		for r := 0; r < rows && e.err == nil; r++ {
			clear(row)
			t.fill(r, row)
			var err error
			buf, err = EncodeRow(buf[:0], t.typ, row)
			if err != nil {
				return e.n, fmt.Errorf("gguf: tensor %q: %w", t.name, err)
			}
			e.bytes(buf)
		}
	}
	e.pad(DefaultAlignment)
	if e.err == nil {
		e.err = e.w.Flush()
	}
	if e.err != nil {
		return e.n, fmt.Errorf("gguf: write: %w", e.err)
	}
	return e.n, nil
}

// WriteFile writes the file to path, replacing it atomically.
func (w *Writer) WriteFile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		return errors.Join(err, f.Close(), os.Remove(tmp))
	}
	if err := f.Close(); err != nil {
		return errors.Join(fmt.Errorf("gguf: %w", err), os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("gguf: %w", err), os.Remove(tmp))
	}
	return nil
}

// encoder writes little-endian values and remembers the first error.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	b   [8]byte
}

func (e *encoder) bytes(p []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
}

func (e *encoder) u8(v uint8) { e.b[0] = v; e.bytes(e.b[:1]) }
func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.b[:], v)
	e.bytes(e.b[:4])
}
func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.b[:], v)
	e.bytes(e.b[:8])
}
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }
func (e *encoder) pad(a int64) {
	if r := e.n % a; r != 0 {
		e.bytes(make([]byte, a-r))
	}
}

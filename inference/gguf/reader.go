package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"

	parser "github.com/gpustack/gguf-parser-go"
)

// TensorInfo describes one checked tensor of an opened file.
type TensorInfo struct {
	Name  string
	Type  Type
	Shape []uint64 // Shape[0] is the row length
	// Offset is the absolute file offset of the tensor's first byte; Size is
	// its byte length. Offset+Size never exceeds the file size.
	Offset int64
	Size   int64
	Elems  int64
}

// File is an opened GGUF file: checked tensor infos and metadata, with the
// tensor data still on disk.
type File struct {
	Path      string
	Size      int64
	Version   uint32
	Alignment uint64
	DataStart int64
	Tensors   []TensorInfo

	meta   map[string]parser.GGUFMetadataKV
	exact  *exact // the header's strings byte for byte
	byName map[string]int
	f      *os.File
}

// splitKey is refused before parsing: gguf-parser-go preallocates its tensor
// list from this key's value without bounding it.
var splitKey = []byte("split.tensors.count")

// Open parses path with gguf-parser-go and checks every tensor it declares.
// The returned File keeps the file open for ReadTensor until Close.
func Open(path string) (*File, error) {
	if parser.CompleteShardGGUFFilename(path) != nil {
		return nil, fmt.Errorf("gguf: %s: split (sharded) GGUF files are not supported", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	gf, size, err := parse(f, path)
	if err != nil {
		f.Close() //nolint:errcheck // read-only, and err is the failure to report
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	ex, err := readExact(f, size)
	if err != nil {
		f.Close() //nolint:errcheck // read-only, and err is the failure to report
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	out, err := check(gf, ex, size)
	if err != nil {
		f.Close() //nolint:errcheck // read-only, and err is the failure to report
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	out.Path, out.f = path, f
	return out, nil
}

// parse runs gguf-parser-go on path, turning its panics into errors.
func parse(f *os.File, path string) (gf *parser.GGUFFile, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, errors.New("not a regular file")
	}
	size = st.Size()
	if size < 24 {
		return nil, 0, fmt.Errorf("file of %d bytes is too short for a GGUF header", size)
	}
	found, err := contains(f, splitKey)
	if err != nil {
		return nil, 0, err
	}
	if found {
		return nil, 0, errors.New("split (sharded) GGUF files are not supported")
	}
	defer func() {
		if r := recover(); r != nil {
			gf, err = nil, fmt.Errorf("malformed file: %v", r)
		}
	}()
	gf, err = parser.ParseGGUFFile(path, parser.UseMMap())
	if err != nil {
		return nil, 0, fmt.Errorf("parse: %w", err)
	}
	return gf, size, nil
}

// contains streams r looking for pat.
func contains(r io.ReaderAt, pat []byte) (bool, error) {
	buf := make([]byte, 1<<20)
	keep := len(pat) - 1
	var off int64
	n0 := 0
	for {
		n, err := r.ReadAt(buf[n0:], off)
		if bytes.Contains(buf[:n0+n], pat) {
			return true, nil
		}
		off += int64(n)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if n0+n >= keep {
			copy(buf, buf[n0+n-keep:n0+n])
			n0 = keep
		} else {
			n0 += n
		}
	}
}

func check(gf *parser.GGUFFile, ex *exact, size int64) (*File, error) {
	if gf.Header.Magic != parser.GGUFMagicGGUFLe {
		return nil, errors.New("only little-endian GGUF is supported")
	}
	out := &File{
		Size:      size,
		Version:   uint32(gf.Header.Version),
		Alignment: DefaultAlignment,
		DataStart: gf.TensorDataStartOffset,
		meta:      make(map[string]parser.GGUFMetadataKV, len(gf.Header.MetadataKV)),
		exact:     ex,
		byName:    make(map[string]int, len(gf.TensorInfos)),
	}
	if len(ex.keys) != len(gf.Header.MetadataKV) || len(ex.tensors) != len(gf.TensorInfos) {
		return nil, errors.New("the header walk and the parser disagree on the entry counts")
	}
	for i, kv := range gf.Header.MetadataKV {
		// Keys are kept exact too: the parser's are trimmed.
		if !sameTrimmed(ex.keys[i], kv.Key) {
			return nil, fmt.Errorf("metadata key %d: %q read as %q", i, ex.keys[i], kv.Key)
		}
		kv.Key = ex.keys[i]
		if _, dup := out.meta[kv.Key]; dup {
			return nil, fmt.Errorf("duplicate metadata key %q", kv.Key)
		}
		out.meta[kv.Key] = kv
	}
	if a, ok, err := out.Uint("general.alignment"); err != nil {
		return nil, err
	} else if ok {
		if a == 0 || a%8 != 0 || a > 1<<20 {
			return nil, fmt.Errorf("general.alignment %d is not a multiple of 8 in 8..1MiB", a)
		}
		out.Alignment = a
	}
	if out.DataStart < 0 || out.DataStart > size {
		return nil, fmt.Errorf("tensor data starts at %d, past the end of a %d-byte file", out.DataStart, size)
	}
	avail := uint64(size - out.DataStart)
	for i, ti := range gf.TensorInfos {
		if !sameTrimmed(ex.tensors[i], ti.Name) {
			return nil, fmt.Errorf("tensor %d: name %q read as %q", i, ex.tensors[i], ti.Name)
		}
		ti.Name = ex.tensors[i]
		t, err := checkTensor(ti, out.Alignment, avail)
		if err != nil {
			return nil, fmt.Errorf("tensor %d %q: %w", i, ti.Name, err)
		}
		if _, dup := out.byName[t.Name]; dup {
			return nil, fmt.Errorf("duplicate tensor %q", t.Name)
		}
		t.Offset += out.DataStart
		out.byName[t.Name] = len(out.Tensors)
		out.Tensors = append(out.Tensors, t)
	}
	return out, nil
}

// sameTrimmed reports whether the parser's s (trimmed) came from raw.
func sameTrimmed(raw, s string) bool { return string(bytes.TrimSpace([]byte(raw))) == s }

func checkTensor(ti parser.GGUFTensorInfo, align, avail uint64) (TensorInfo, error) {
	if ti.Name == "" {
		return TensorInfo{}, errors.New("empty name")
	}
	if len(ti.Dimensions) != int(ti.NDimensions) {
		return TensorInfo{}, errors.New("dimension count mismatch")
	}
	trait, ok := ti.Type.Trait()
	if !ok {
		return TensorInfo{}, fmt.Errorf("unknown tensor type %d", uint32(ti.Type))
	}
	elems, n, err := tensorBytes(ti.Dimensions, trait.BlockSize, trait.TypeSize)
	if err != nil {
		return TensorInfo{}, err
	}
	if ti.Offset%align != 0 {
		return TensorInfo{}, fmt.Errorf("data offset %d is not %d-byte aligned", ti.Offset, align)
	}
	end, carry := bits.Add64(ti.Offset, n, 0)
	if carry != 0 || end > avail {
		return TensorInfo{}, fmt.Errorf("data [%d, +%d) runs past the %d bytes of tensor data in the file", ti.Offset, n, avail)
	}
	return TensorInfo{
		Name:   ti.Name,
		Type:   Type(ti.Type),
		Shape:  append([]uint64(nil), ti.Dimensions...),
		Offset: int64(ti.Offset),
		Size:   int64(n),
		Elems:  int64(elems),
	}, nil
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// ReadTensor reads the raw bytes of a tensor into dst (grown to t.Size).
func (f *File) ReadTensor(t TensorInfo, dst []byte) ([]byte, error) {
	if f.f == nil {
		return dst, errors.New("gguf: file is closed")
	}
	if t.Size < 0 || t.Offset < 0 || t.Offset+t.Size > f.Size {
		return dst, fmt.Errorf("gguf: tensor %q lies outside the file", t.Name)
	}
	if int64(cap(dst)) < t.Size {
		dst = make([]byte, t.Size)
	}
	dst = dst[:t.Size]
	if _, err := f.f.ReadAt(dst, t.Offset); err != nil {
		return dst, fmt.Errorf("gguf: read tensor %q: %w", t.Name, err)
	}
	return dst, nil
}

// Close releases the file.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

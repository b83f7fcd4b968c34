package gguf

import (
	"fmt"
	"math/bits"

	parser "github.com/gpustack/gguf-parser-go"
)

// Type is a GGML tensor type. The values are the ggml ones.
type Type uint32

// Tensor types this package writes and whose rows it can decode.
const (
	TypeF32  Type = 0
	TypeF16  Type = 1
	TypeQ8_0 Type = 8
	TypeQ4_K Type = 12
	TypeQ6_K Type = 14
	TypeBF16 Type = 30
)

// Q8BlockSize is the number of weights in one Q8_0 block; Q8BlockBytes is
// its encoded size (an fp16 scale followed by 32 int8 quants).
const (
	Q8BlockSize  = 32
	Q8BlockBytes = 34
)

// MaxDims is the largest number of dimensions a tensor may have (GGML_MAX_DIMS).
const MaxDims = 4

func (t Type) String() string {
	switch t {
	case TypeF32:
		return "F32"
	case TypeF16:
		return "F16"
	case TypeQ8_0:
		return "Q8_0"
	case TypeQ4_K:
		return "Q4_K"
	case TypeQ6_K:
		return "Q6_K"
	case TypeBF16:
		return "BF16"
	}
	// Types the package cannot decode still get ggml's name (Q4_0, IQ2_XS,
	// ...), so a refusal names what the file holds.
	if _, known := parser.GGMLType(t).Trait(); known {
		return parser.GGMLType(t).String()
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// ParseType maps a name such as "F32", "f16" or "q8_0" to its Type.
func ParseType(name string) (Type, error) {
	switch name {
	case "F32", "f32":
		return TypeF32, nil
	case "F16", "f16":
		return TypeF16, nil
	case "Q8_0", "q8_0", "Q8", "q8":
		return TypeQ8_0, nil
	case "Q4_K", "q4_k":
		return TypeQ4_K, nil
	case "Q6_K", "q6_k":
		return TypeQ6_K, nil
	case "BF16", "bf16":
		return TypeBF16, nil
	}
	return 0, fmt.Errorf("gguf: unknown tensor type %q (want F32, F16, BF16, Q8_0, Q4_K or Q6_K)", name)
}

// Supported reports whether the package can encode and decode rows of t.
func (t Type) Supported() bool {
	_, _, ok := t.layout()
	return ok
}

// layout returns the elements per block and bytes per block of t.
func (t Type) layout() (block, size uint64, ok bool) {
	switch t {
	case TypeF32:
		return 1, 4, true
	case TypeF16:
		return 1, 2, true
	case TypeQ8_0:
		return Q8BlockSize, Q8BlockBytes, true
	case TypeBF16:
		return 1, 2, true
	case TypeQ4_K:
		return KBlockSize, q4KBlockBytes, true
	case TypeQ6_K:
		return KBlockSize, q6KBlockBytes, true
	}
	return 0, 0, false
}

// RowBytes returns the encoded size of a row of n elements of type t.
func (t Type) RowBytes(n int) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("gguf: negative row length %d", n)
	}
	block, size, ok := t.layout()
	if !ok {
		return 0, fmt.Errorf("gguf: unsupported tensor type %v", t)
	}
	if n%int(block) != 0 {
		return 0, fmt.Errorf("gguf: %v row length %d is not a multiple of %d", t, n, block)
	}
	return n / int(block) * int(size), nil
}

// tensorBytes returns the byte size of a tensor of the given shape whose
// blocks hold blockSize elements in typeSize bytes, refusing overflow and rows
// that do not fill whole blocks.
func tensorBytes(shape []uint64, blockSize, typeSize uint64) (elems, size uint64, err error) {
	if len(shape) == 0 || len(shape) > MaxDims {
		return 0, 0, fmt.Errorf("%d dimensions (want 1..%d)", len(shape), MaxDims)
	}
	if blockSize == 0 || typeSize == 0 {
		return 0, 0, fmt.Errorf("type has no block layout")
	}
	elems = 1
	for i, d := range shape {
		if d == 0 {
			return 0, 0, fmt.Errorf("dimension %d is zero", i)
		}
		hi, lo := bits.Mul64(elems, d)
		if hi != 0 || lo > 1<<52 {
			return 0, 0, fmt.Errorf("element count overflows")
		}
		elems = lo
	}
	if shape[0]%blockSize != 0 {
		return 0, 0, fmt.Errorf("row length %d is not a multiple of the block size %d", shape[0], blockSize)
	}
	hi, lo := bits.Mul64(elems/blockSize, typeSize)
	if hi != 0 || lo > 1<<62 {
		return 0, 0, fmt.Errorf("byte size overflows")
	}
	return elems, lo, nil
}

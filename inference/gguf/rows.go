package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeRow appends the encoding of src as type t to dst.
func EncodeRow(dst []byte, t Type, src []float32) ([]byte, error) {
	switch t {
	case TypeF32:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
		return dst, nil
	case TypeF16:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(v))
		}
		return dst, nil
	case TypeQ8_0:
		if len(src)%Q8BlockSize != 0 {
			return dst, fmt.Errorf("gguf: Q8_0 row length %d is not a multiple of %d", len(src), Q8BlockSize)
		}
		for b := 0; b < len(src); b += Q8BlockSize {
			dst = appendQ8Block(dst, src[b:b+Q8BlockSize])
		}
		return dst, nil
	case TypeBF16:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint16(dst, f32ToBF16(v))
		}
		return dst, nil
	case TypeQ4_K, TypeQ6_K:
		if len(src)%KBlockSize != 0 {
			return dst, fmt.Errorf("gguf: %v row length %d is not a multiple of %d", t, len(src), KBlockSize)
		}
		for b := 0; b < len(src); b += KBlockSize {
			if t == TypeQ4_K {
				dst = appendQ4KBlock(dst, src[b:b+KBlockSize])
			} else {
				dst = appendQ6KBlock(dst, src[b:b+KBlockSize])
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("gguf: cannot encode tensor type %v", t)
}

// appendQ8Block quantises 32 values the way ggml's quantize_row_q8_0_ref does.
func appendQ8Block(dst []byte, x []float32) []byte {
	var amax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
	for _, v := range x {
		q := math.Round(float64(v * id))
		dst = append(dst, byte(int8(max(-127, min(127, q)))))
	}
	return dst
}

// DecodeRow decodes len(dst) elements of type t from src into dst. src must
// hold exactly the encoding of len(dst) elements.
func DecodeRow(dst []float32, t Type, src []byte) error {
	n, err := t.RowBytes(len(dst))
	if err != nil {
		return err
	}
	if len(src) != n {
		return fmt.Errorf("gguf: %v row of %d elements needs %d bytes, got %d", t, len(dst), n, len(src))
	}
	switch t {
	case TypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case TypeF16:
		for i := range dst {
			dst[i] = f16Table[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case TypeQ8_0:
		for b := 0; b < len(dst); b += Q8BlockSize {
			blk := src[b/Q8BlockSize*Q8BlockBytes:][:Q8BlockBytes]
			d := f16Table[binary.LittleEndian.Uint16(blk)]
			q := blk[2:Q8BlockBytes]
			out := dst[b : b+Q8BlockSize]
			for i := range out {
				out[i] = d * float32(int8(q[i]))
			}
		}
	case TypeBF16:
		for i := range dst {
			dst[i] = bf16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case TypeQ4_K:
		decodeQ4K(dst, src)
	case TypeQ6_K:
		decodeQ6K(dst, src)
	}
	return nil
}

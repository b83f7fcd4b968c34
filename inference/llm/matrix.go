package llm

import (
	"encoding/binary"
	"fmt"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Matrix is a weight matrix of Rows rows of Cols elements, held in the form
// the kernels read: F32 as float32, F16 as its half-precision bits, Q8_0 as
// int8 quants with the block scales decoded to float32 beside them, Q4_K
// the same way plus each sub-block's min (q4k.go). BF16 and Q6_K rows are
// decoded to float32 at load (Type F32, Stored the file's type): exact, the
// kernels unchanged, at four bytes a weight.
type Matrix struct {
	Type   gguf.Type
	Stored gguf.Type
	Rows   int
	Cols   int
	f32    []float32
	f16    []uint16
	q8     []int8    // Q8_0 quants, Rows x Cols
	q8d    []float32 // Q8_0 block scales, Rows x Cols/32
	// Q4_K sub-block mins, Rows x Cols/32 (q8 and q8d then hold its quants
	// and sub-block scales).
	q4min []float32
}

// NewMatrix decodes encoded rows.
func NewMatrix(t gguf.Type, rows, cols int, raw []byte) (*Matrix, error) {
	rb, err := t.RowBytes(cols)
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	if rows <= 0 || cols <= 0 || len(raw) != rows*rb {
		return nil, fmt.Errorf("llm: %v matrix %dx%d needs %d bytes, got %d", t, rows, cols, rows*rb, len(raw))
	}
	m := &Matrix{Type: t, Stored: t, Rows: rows, Cols: cols}
	switch t {
	case gguf.TypeF32, gguf.TypeBF16, gguf.TypeQ6_K:
		m.Type = gguf.TypeF32
		m.f32 = make([]float32, rows*cols)
		if err := gguf.DecodeRow(m.f32, t, raw); err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
	case gguf.TypeF16:
		m.f16 = make([]uint16, rows*cols)
		for i := range m.f16 {
			m.f16[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
	case gguf.TypeQ8_0:
		m.q8 = make([]int8, rows*cols)
		m.q8d = make([]float32, rows*cols/qk)
		unpackQ8(raw, m.q8, m.q8d)
	case gguf.TypeQ4_K:
		m.q8 = make([]int8, rows*cols)
		m.q8d = make([]float32, rows*cols/qk)
		m.q4min = make([]float32, rows*cols/qk)
		unpackQ4K(raw, m.q8, m.q8d, m.q4min)
	default:
		return nil, fmt.Errorf("llm: %v matrices are not supported", t)
	}
	return m, nil
}

// Row returns row r as float32: a view for F32 weights, else decoded into
// scratch (which must hold Cols elements).
func (m *Matrix) Row(r int, scratch []float32) []float32 {
	c := m.Cols
	switch m.Type {
	case gguf.TypeF32:
		return m.f32[r*c : (r+1)*c : (r+1)*c]
	case gguf.TypeF16:
		scratch = scratch[:c]
		for i, h := range m.f16[r*c : (r+1)*c] {
			scratch[i] = gguf.F16ToF32(h)
		}
		return scratch
	}
	scratch = scratch[:c]
	q, d := m.q8Row(r)
	// The same expressions as gguf.DecodeRow.
	if m.q4min != nil {
		mins := m.q4Mins(r)
		for b, db := range d {
			for i, v := range q[b*qk : (b+1)*qk] {
				scratch[b*qk+i] = float32(db*float32(v)) - mins[b]
			}
		}
		return scratch
	}
	for b, db := range d {
		for i, v := range q[b*qk : (b+1)*qk] {
			scratch[b*qk+i] = db * float32(v)
		}
	}
	return scratch
}

func (m *Matrix) f32Row(r int) []float32 {
	return m.f32[r*m.Cols : (r+1)*m.Cols : (r+1)*m.Cols]
}

func (m *Matrix) f16Row(r int) []uint16 {
	return m.f16[r*m.Cols : (r+1)*m.Cols : (r+1)*m.Cols]
}

func (m *Matrix) q8Row(r int) ([]int8, []float32) {
	nb := m.Cols / qk
	return m.q8[r*m.Cols : (r+1)*m.Cols : (r+1)*m.Cols], m.q8d[r*nb : (r+1)*nb : (r+1)*nb]
}

// Bytes is the memory the weights occupy.
func (m *Matrix) Bytes() int {
	return 4*len(m.f32) + 2*len(m.f16) + len(m.q8) + 4*len(m.q8d)
}

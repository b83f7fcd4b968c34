package llm

import (
	"fmt"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Matrix is a weight matrix of Rows rows of Cols elements. F32 weights are
// held as float32; F16 and Q8_0 weights stay encoded and are decoded one row
// (one Q8_0 block at a time) as they are used.
type Matrix struct {
	Type     gguf.Type
	Rows     int
	Cols     int
	f32      []float32
	raw      []byte
	rowBytes int
}

// NewMatrix wraps encoded rows.
func NewMatrix(t gguf.Type, rows, cols int, raw []byte) (*Matrix, error) {
	rb, err := t.RowBytes(cols)
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	if rows <= 0 || cols <= 0 || len(raw) != rows*rb {
		return nil, fmt.Errorf("llm: %v matrix %dx%d needs %d bytes, got %d", t, rows, cols, rows*rb, len(raw))
	}
	m := &Matrix{Type: t, Rows: rows, Cols: cols, rowBytes: rb}
	if t == gguf.TypeF32 {
		m.f32 = make([]float32, rows*cols)
		if err := gguf.DecodeRow(m.f32, t, raw); err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
		return m, nil
	}
	m.raw = raw
	return m, nil
}

// Row returns row r as float32: a view for F32 weights, else decoded into
// scratch (which must hold Cols elements).
func (m *Matrix) Row(r int, scratch []float32) []float32 {
	if m.f32 != nil {
		return m.f32[r*m.Cols : (r+1)*m.Cols : (r+1)*m.Cols]
	}
	scratch = scratch[:m.Cols]
	// The slice lengths are fixed by construction, so DecodeRow cannot fail.
	_ = gguf.DecodeRow(scratch, m.Type, m.raw[r*m.rowBytes:(r+1)*m.rowBytes])
	return scratch
}

// Bytes is the memory the weights occupy.
func (m *Matrix) Bytes() int {
	if m.f32 != nil {
		return 4 * len(m.f32)
	}
	return len(m.raw)
}

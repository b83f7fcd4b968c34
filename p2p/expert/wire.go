package expert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ProtocolID is the libp2p protocol of remote expert batches.
const ProtocolID = "/tenzro/expert/1.0.0"

// ServiceName is the resource-manager service both ends attach streams to.
const ServiceName = p2p.ServiceExpert

// Frame limits. A request carries one layer's batches for one holder: at
// most MaxRows rows of at most MaxDim values each, MaxRequestSize bytes in
// all (a prefill chunk of 64 tokens, top-2, dim 4096 is 2 MiB).
const (
	MaxBatches     = 256
	MaxRows        = 4096
	MaxDim         = 16384
	MaxRequestSize = 8 << 20
	// MaxResponseSize: the output rows are as large as the input rows,
	// plus the receipt envelope.
	MaxResponseSize = MaxRequestSize + MaxReceiptSize
	MaxReasonLen    = 256
	MaxPosition     = 1 << 24
)

// Error codes of a Response (Code 0 is success).
const (
	CodeOK           uint32 = 0
	CodeWrongNetwork uint32 = 1
	CodeNotHeld      uint32 = 2 // the holder does not hold an expert of the request
	CodeBadRequest   uint32 = 3 // rows of the wrong width, positions out of range
	CodeInternal     uint32 = 4 // the holder failed computing or signing
)

// ErrMalformed marks a frame that does not decode or breaks a limit.
var ErrMalformed = errors.New("expert: malformed frame")

// Request is what a caller sends one holder for one layer of one forward
// pass: every batch of the layer routed to that holder.
type Request struct {
	Network string      `cbor:"1,keyasint"`
	Model   [32]byte    `cbor:"2,keyasint"`
	Layer   uint32      `cbor:"3,keyasint"`
	Dim     uint32      `cbor:"4,keyasint"`
	Batches []WireBatch `cbor:"5,keyasint"`
	// KnownCert is the hash of the holder's session certificate the
	// caller already holds (empty: none). A holder whose current
	// certificate has that hash sends its receipt's envelope without it,
	// saving some 5 KB an exchange; the caller puts it back before
	// verifying (the envelope's signature does not cover the certificate,
	// so the reassembled receipt is exactly the holder's).
	KnownCert []byte `cbor:"6,keyasint,omitempty"`
}

// WireBatch is one expert's rows: the positions routed to it and their input
// rows, Dim float32 values each, little-endian (the exact bytes the
// receipt's input hash covers).
type WireBatch struct {
	Expert    uint32   `cbor:"1,keyasint"`
	Positions []uint32 `cbor:"2,keyasint"`
	Rows      []byte   `cbor:"3,keyasint"`
}

// Response is the holder's answer: one output per batch, in order, and
// the receipt signing them; or a nonzero Code and a reason.
type Response struct {
	Code    uint32   `cbor:"1,keyasint,omitempty"`
	Reason  string   `cbor:"2,keyasint,omitempty"`
	Outputs [][]byte `cbor:"3,keyasint,omitempty"`
	Receipt []byte   `cbor:"4,keyasint,omitempty"`
}

// Check validates a request's structure: batches in ascending expert
// order, each with as many positions (ascending, below MaxPosition) as
// rows of Dim values, every value finite.
func (r *Request) Check() error {
	switch {
	case r.Dim == 0 || r.Dim > MaxDim:
		return fmt.Errorf("%w: dim %d outside 1..%d", ErrMalformed, r.Dim, MaxDim)
	case len(r.Batches) == 0 || len(r.Batches) > MaxBatches:
		return fmt.Errorf("%w: %d batches, want 1..%d", ErrMalformed, len(r.Batches), MaxBatches)
	case len(r.KnownCert) != 0 && len(r.KnownCert) != 32:
		return fmt.Errorf("%w: known_cert of %d bytes, want 0 or 32", ErrMalformed, len(r.KnownCert))
	}
	rows := 0
	for i, b := range r.Batches {
		if i > 0 && b.Expert <= r.Batches[i-1].Expert {
			return fmt.Errorf("%w: batch %d: expert %d not above %d", ErrMalformed, i, b.Expert, r.Batches[i-1].Expert)
		}
		n := len(b.Positions)
		if n == 0 {
			return fmt.Errorf("%w: batch %d has no rows", ErrMalformed, i)
		}
		if rows += n; rows > MaxRows {
			return fmt.Errorf("%w: more than %d rows", ErrMalformed, MaxRows)
		}
		for j, p := range b.Positions {
			if p >= MaxPosition || (j > 0 && p <= b.Positions[j-1]) {
				return fmt.Errorf("%w: batch %d: positions not ascending below %d", ErrMalformed, i, MaxPosition)
			}
		}
		if len(b.Rows) != n*int(r.Dim)*4 {
			return fmt.Errorf("%w: batch %d: %d row bytes for %d rows of %d values", ErrMalformed, i, len(b.Rows), n, r.Dim)
		}
		if !finite(b.Rows) {
			return fmt.Errorf("%w: batch %d: a value is not finite", ErrMalformed, i)
		}
	}
	return nil
}

// DecodeRequest strictly decodes a request frame (canonical CBOR, at most
// MaxRequestSize bytes) and checks it.
func DecodeRequest(b []byte) (*Request, error) {
	return cborx.UnmarshalChecked(b, MaxRequestSize, ErrMalformed, (*Request).Check)
}

// DecodeResponse strictly decodes a response frame answering req: a
// success has one output per batch of exactly its input's size and a
// receipt; a failure has neither. It verifies nothing (see Verify).
func DecodeResponse(b []byte, req *Request) (*Response, error) {
	r := new(Response)
	if err := cborx.UnmarshalCanonical(b, MaxResponseSize, r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(r.Reason) > MaxReasonLen || !utf8.ValidString(r.Reason) {
		return nil, fmt.Errorf("%w: reason longer than %d bytes or not UTF-8", ErrMalformed, MaxReasonLen)
	}
	if r.Code != CodeOK {
		if len(r.Outputs) != 0 || len(r.Receipt) != 0 {
			return nil, fmt.Errorf("%w: failure code %d with outputs", ErrMalformed, r.Code)
		}
		return r, nil
	}
	if len(r.Outputs) != len(req.Batches) {
		return nil, fmt.Errorf("%w: %d outputs for %d batches", ErrMalformed, len(r.Outputs), len(req.Batches))
	}
	for i, o := range r.Outputs {
		if len(o) != len(req.Batches[i].Rows) {
			return nil, fmt.Errorf("%w: output %d is %d bytes, its input %d", ErrMalformed, i, len(o), len(req.Batches[i].Rows))
		}
	}
	if len(r.Receipt) == 0 || len(r.Receipt) > MaxReceiptSize {
		return nil, fmt.Errorf("%w: receipt of %d bytes, want 1..%d", ErrMalformed, len(r.Receipt), MaxReceiptSize)
	}
	return r, nil
}

func encode(v any, limit int) ([]byte, error) {
	b, err := cborx.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("expert: encode: %w", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("expert: frame of %d bytes exceeds %d", len(b), limit)
	}
	return b, nil
}

// checked is a wire or stored message that checks what decoding alone
// does not; every one is checked before it is encoded, and once decoded
// (cborx.UnmarshalChecked).
type checked[T any] interface {
	*T
	Check() error
}

// encodeChecked checks v and encodes it within limit bytes.
func encodeChecked[T any, P checked[T]](v P, limit int) ([]byte, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	return encode(v, limit)
}

// EncodeRequest encodes a request, refusing one a holder would reset.
func EncodeRequest(r *Request) ([]byte, error) { return encodeChecked(r, MaxRequestSize) }

// EncodeResponse encodes a response.
func EncodeResponse(r *Response) ([]byte, error) { return encode(r, MaxResponseSize) }

// PackRows returns rows as the wire's bytes: each value's IEEE-754 bits,
// little-endian, row after row. Every row must have dim values.
func PackRows(rows [][]float32, dim int) ([]byte, error) {
	out := make([]byte, 0, len(rows)*dim*4)
	for i, r := range rows {
		if len(r) != dim {
			return nil, fmt.Errorf("expert: row %d has %d values, want %d", i, len(r), dim)
		}
		for _, v := range r {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	return out, nil
}

// UnpackRows is PackRows' inverse: len(b) must be a multiple of 4*dim.
func UnpackRows(b []byte, dim int) ([][]float32, error) {
	if dim <= 0 || len(b)%(4*dim) != 0 {
		return nil, fmt.Errorf("expert: %d bytes are not rows of %d values", len(b), dim)
	}
	n := len(b) / (4 * dim)
	flat := make([]float32, n*dim)
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return rows, nil
}

// finite reports whether every float32 of b is finite.
func finite(b []byte) bool {
	for i := 0; i+4 <= len(b); i += 4 {
		if binary.LittleEndian.Uint32(b[i:])&0x7f800000 == 0x7f800000 {
			return false
		}
	}
	return true
}

// clip bounds a reason at MaxReasonLen bytes of valid UTF-8.
func clip(s string) string { return p2p.Clip(s, MaxReasonLen) }

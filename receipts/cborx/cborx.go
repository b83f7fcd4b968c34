package cborx

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Decoding limits shared by every strict decode. Input size is bounded by
// the maxSize argument of Unmarshal; these bound the structure within it.
const (
	MaxNestedLevels  = 16
	MaxArrayElements = 1 << 16
	MaxMapPairs      = 1 << 12
)

// ErrTooLarge is returned when an input exceeds the caller's size limit.
var ErrTooLarge = errors.New("cborx: input exceeds size limit")

// ErrNonCanonical is returned by UnmarshalCanonical when the input decodes
// but is not the deterministic encoding of the decoded value.
var ErrNonCanonical = errors.New("cborx: input is not in core deterministic encoding")

// Enc is the deterministic encoder every signed payload must use.
var Enc cbor.EncMode

// Dec is the strict decoder. It does not bound input size by itself; use
// Unmarshal, or check the length before calling Dec.Unmarshal.
var Dec cbor.DecMode

func init() {
	encOpts := cbor.CoreDetEncOptions()
	encOpts.NilContainers = cbor.NilContainerAsEmpty
	encOpts.TagsMd = cbor.TagsForbidden
	em, err := encOpts.EncMode()
	if err != nil {
		panic(fmt.Sprintf("cborx: invalid encoder options: %v", err))
	}
	Enc = em

	dm, err := DecOptions().DecMode()
	if err != nil {
		panic(fmt.Sprintf("cborx: invalid decoder options: %v", err))
	}
	Dec = dm
}

// DecOptions returns the strict decoding options behind Dec, for packages
// that need to adjust one limit and build their own cbor.DecMode.
func DecOptions() cbor.DecOptions {
	return cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		MaxNestedLevels:   MaxNestedLevels,
		MaxArrayElements:  MaxArrayElements,
		MaxMapPairs:       MaxMapPairs,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}
}

// Marshal encodes v with Enc.
func Marshal(v any) ([]byte, error) {
	b, err := Enc.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cborx: encode: %w", err)
	}
	return b, nil
}

// Unmarshal decodes exactly one CBOR data item from b into v with Dec,
// rejecting inputs longer than maxSize bytes (maxSize must be positive).
// Allocation is bounded by len(b): the decoder checks every declared length
// against the remaining input before allocating.
func Unmarshal(b []byte, maxSize int, v any) error {
	if maxSize <= 0 {
		return fmt.Errorf("cborx: non-positive size limit %d", maxSize)
	}
	if len(b) > maxSize {
		return fmt.Errorf("%w: %d > %d bytes", ErrTooLarge, len(b), maxSize)
	}
	if err := Dec.Unmarshal(b, v); err != nil {
		return fmt.Errorf("cborx: decode: %w", err)
	}
	return nil
}

// UnmarshalCanonical is Unmarshal followed by a check that re-encoding v
// with Enc reproduces b exactly, so every accepted value has exactly one
// byte representation.
func UnmarshalCanonical(b []byte, maxSize int, v any) error {
	if err := Unmarshal(b, maxSize, v); err != nil {
		return err
	}
	re, err := Enc.Marshal(v)
	if err != nil {
		return fmt.Errorf("cborx: re-encode: %w", err)
	}
	if !bytes.Equal(re, b) {
		return ErrNonCanonical
	}
	return nil
}

// UnmarshalChecked is UnmarshalCanonical into a new T followed by check,
// for the messages decoding alone does not make valid: a decoding error
// is returned wrapped in malformed (the message's own sentinel), check's
// error as it is.
func UnmarshalChecked[T any](b []byte, maxSize int, malformed error, check func(*T) error) (*T, error) {
	v := new(T)
	if err := UnmarshalCanonical(b, maxSize, v); err != nil {
		return nil, fmt.Errorf("%w: %w", malformed, err)
	}
	if err := check(v); err != nil {
		return nil, err
	}
	return v, nil
}

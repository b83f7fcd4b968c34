package gguf

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	parser "github.com/gpustack/gguf-parser-go"
)

// String returns a string value; ok is false when the key is absent.
func (f *File) String(key string) (v string, ok bool, err error) {
	kv, ok := f.meta[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := f.exact.strs[key]
	if kv.ValueType != parser.GGUFMetadataValueTypeString || !isStr {
		return "", true, fmt.Errorf("gguf: metadata %q is a %v, want a string", key, kv.ValueType)
	}
	return s, true, nil
}

// Uint returns a non-negative integer value of any integer type.
func (f *File) Uint(key string) (v uint64, ok bool, err error) {
	kv, ok := f.meta[key]
	if !ok {
		return 0, false, nil
	}
	v, err = toUint(kv.Value)
	if err != nil {
		return 0, true, fmt.Errorf("gguf: metadata %q: %w", key, err)
	}
	return v, true, nil
}

// Float returns a floating-point (or integer) value.
func (f *File) Float(key string) (v float64, ok bool, err error) {
	kv, ok := f.meta[key]
	if !ok {
		return 0, false, nil
	}
	v, err = toFloat(kv.Value)
	if err != nil {
		return 0, true, fmt.Errorf("gguf: metadata %q: want a number: %w", key, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, true, fmt.Errorf("gguf: metadata %q is not finite", key)
	}
	return v, true, nil
}

// Bool returns a bool value.
func (f *File) Bool(key string) (v bool, ok bool, err error) {
	kv, ok := f.meta[key]
	if !ok {
		return false, false, nil
	}
	b, isBool := kv.Value.(bool)
	if !isBool {
		return false, true, fmt.Errorf("gguf: metadata %q is a %v, want a bool", key, kv.ValueType)
	}
	return b, true, nil
}

func (f *File) array(key string, want parser.GGUFMetadataValueType) (parser.GGUFMetadataKVArrayValue, bool, error) {
	kv, ok := f.meta[key]
	if !ok {
		return parser.GGUFMetadataKVArrayValue{}, false, nil
	}
	av, isArr := kv.Value.(parser.GGUFMetadataKVArrayValue)
	if !isArr {
		return av, true, fmt.Errorf("gguf: metadata %q is a %v, want an array", key, kv.ValueType)
	}
	if uint64(len(av.Array)) != av.Len {
		return av, true, fmt.Errorf("gguf: metadata %q: array items were not loaded", key)
	}
	if want != parser.GGUFMetadataValueTypeArray && av.Type != want {
		return av, true, fmt.Errorf("gguf: metadata %q holds %v items, want %v", key, av.Type, want)
	}
	return av, true, nil
}

// Strings returns an array of strings, byte for byte as in the file.
func (f *File) Strings(key string) ([]string, bool, error) {
	if _, ok, err := f.array(key, parser.GGUFMetadataValueTypeString); !ok || err != nil {
		return nil, ok, err
	}
	ss, ok := f.exact.arrs[key]
	if !ok {
		return nil, true, fmt.Errorf("gguf: metadata %q: not a string array in the header", key)
	}
	return slices.Clone(ss), true, nil
}

// Float32s returns an array of numbers as float32.
func (f *File) Float32s(key string) ([]float32, bool, error) {
	return arrayOf(f, key, parser.GGUFMetadataValueTypeArray, func(x any) (float32, error) {
		v, err := toFloat(x)
		return float32(v), err
	})
}

// Ints returns an array of integers.
func (f *File) Ints(key string) ([]int64, bool, error) {
	return arrayOf(f, key, parser.GGUFMetadataValueTypeArray, toInt)
}

// arrayOf returns the array at key (of items of type want, or of any
// type for GGUFMetadataValueTypeArray), each item converted by conv.
func arrayOf[T any](f *File, key string, want parser.GGUFMetadataValueType, conv func(any) (T, error)) ([]T, bool, error) {
	av, ok, err := f.array(key, want)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make([]T, len(av.Array))
	for i, x := range av.Array {
		if out[i], err = conv(x); err != nil {
			return nil, true, fmt.Errorf("gguf: metadata %q item %d: %w", key, i, err)
		}
	}
	return out, true, nil
}

// toInt converts an integer of any width and sign; a uint64 above
// MaxInt64 is out of range.
func toInt(x any) (int64, error) {
	v := reflect.ValueOf(x)
	switch {
	case v.CanInt():
		return v.Int(), nil
	case v.CanUint():
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u), nil
		}
		return 0, fmt.Errorf("integer %d out of range", v.Uint())
	}
	return 0, fmt.Errorf("%T is not an integer", x)
}

// toFloat converts a float or an integer.
func toFloat(x any) (float64, error) {
	switch v := x.(type) {
	case float32:
		return float64(v), nil
	case float64:
		return v, nil
	}
	n, err := toInt(x)
	return float64(n), err
}

func toUint(x any) (uint64, error) {
	if v, ok := x.(uint64); ok {
		return v, nil
	}
	n, err := toInt(x)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("negative value %d", n)
	}
	return uint64(n), nil
}

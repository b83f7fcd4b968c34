package cborx

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

type msg struct {
	A uint64 `cbor:"1,keyasint"`
	B []byte `cbor:"2,keyasint"`
	C string `cbor:"10,keyasint"`
}

func TestMarshalDeterministic(t *testing.T) {
	// Map keys sort by encoded bytes regardless of insertion order.
	m1, err := Marshal(map[string]int{"b": 1, "a": 2, "aa": 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xa3, 0x61, 'a', 0x02, 0x61, 'b', 0x01, 0x62, 'a', 'a', 0x03}; !bytes.Equal(m1, want) {
		t.Fatalf("got %x, want %x", m1, want)
	}
	nilB, _ := Marshal(msg{A: 1})
	emptyB, _ := Marshal(msg{A: 1, B: []byte{}})
	if !bytes.Equal(nilB, emptyB) {
		t.Fatalf("nil %x and empty %x byte strings encode differently", nilB, emptyB)
	}
	if _, err := Marshal(cbor.Tag{Number: 99, Content: 1}); err == nil {
		t.Fatal("tags are encodable")
	}
}

func TestUnmarshalStrict(t *testing.T) {
	good, err := Marshal(msg{A: 7, B: []byte("x"), C: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var m msg
	if err := UnmarshalCanonical(good, len(good), &m); err != nil || m.A != 7 || m.C != "c" {
		t.Fatalf("round trip: %+v, %v", m, err)
	}
	for name, tc := range map[string]struct {
		in   []byte
		max  int
		want error
	}{
		"too large":     {good, len(good) - 1, ErrTooLarge},
		"non-positive":  {good, 0, nil},
		"trailing":      {append(bytes.Clone(good), 0), 100, nil},
		"unknown field": {[]byte{0xa1, 0x03, 0x00}, 100, nil},
		"duplicate key": {[]byte{0xa2, 0x01, 0x00, 0x01, 0x01}, 100, nil},
		"tag":           {[]byte{0xc1, 0xa0}, 100, nil},
		"indefinite":    {[]byte{0xbf, 0xff}, 100, nil},
		"non-canonical": {[]byte{0xa1, 0x01, 0x18, 0x07}, 100, ErrNonCanonical},
		"wrong type":    {[]byte{0xa1, 0x01, 0x61, 'x'}, 100, nil},
		"too deep":      {bytes.Repeat([]byte{0x81}, MaxNestedLevels+2), 100, nil},
	} {
		var v any = &msg{}
		if name == "too deep" {
			v = new(any)
		}
		err := UnmarshalCanonical(tc.in, tc.max, v)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	// The non-canonical input is otherwise well-formed.
	if err := Unmarshal([]byte{0xa1, 0x01, 0x18, 0x07}, 100, &m); err != nil || m.A != 7 {
		t.Fatalf("Unmarshal of non-minimal int: %+v, %v", m, err)
	}
}

// TestUnmarshalChecked: a valid message comes back decoded; one that does
// not decode is refused wrapped in the caller's sentinel; one that
// decodes but fails its check is refused with the check's own error.
func TestUnmarshalChecked(t *testing.T) {
	errBad, errCheck := errors.New("malformed"), errors.New("check")
	check := func(m *msg) error {
		if m.A == 0 {
			return errCheck
		}
		return nil
	}
	good, err := Marshal(&msg{A: 7, C: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := UnmarshalChecked(good, 64, errBad, check); err != nil || m.A != 7 || m.C != "x" {
		t.Fatalf("valid message: %+v, %v", m, err)
	}
	if _, err := UnmarshalChecked(good[:len(good)-1], 64, errBad, check); !errors.Is(err, errBad) {
		t.Fatalf("truncated message: %v, want it wrapped in the sentinel", err)
	}
	zero, err := Marshal(&msg{C: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalChecked(zero, 64, errBad, check); !errors.Is(err, errCheck) || errors.Is(err, errBad) {
		t.Fatalf("message failing its check: %v, want the check's error", err)
	}
}

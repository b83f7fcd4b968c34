package identity

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

func TestUnmarshalEnvelopeRejects(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	e := seal(t, newSession(t, id), heartbeatDomain, []byte("payload"))
	wire := marshal(t, e)
	if wire[0] != 0xa5 {
		t.Fatalf("envelope does not start with a 5-pair map header: %#x", wire[0])
	}
	if len(wire) > len(e.Payload)+EnvelopeOverhead {
		t.Fatalf("envelope of %d bytes exceeds payload %d + EnvelopeOverhead", len(wire), len(e.Payload))
	}
	long := seal(t, newSession(t, id), strings.Repeat("d", MaxLabelLen), []byte("p"))
	long.PayloadType = strings.Repeat("t", MaxLabelLen)
	if n := len(marshal(t, long)); n > len(long.Payload)+EnvelopeOverhead {
		t.Fatalf("envelope with maximal labels is %d bytes, over EnvelopeOverhead", n)
	}
	if _, err := UnmarshalEnvelope(wire, len(wire)); err != nil {
		t.Fatalf("valid envelope at exactly maxSize: %v", err)
	}

	cases := map[string]struct {
		in      []byte
		max     int
		wantErr error
	}{
		"too large":      {wire, len(wire) - 1, cborx.ErrTooLarge},
		"zero limit":     {wire, 0, ErrMalformedEnvelope},
		"empty":          {nil, 1 << 20, ErrMalformedEnvelope},
		"trailing bytes": {append(bytes.Clone(wire), 0x00), 1 << 20, ErrMalformedEnvelope},
		"truncated":      {wire[:len(wire)-1], 1 << 20, ErrMalformedEnvelope},
		// Same map with a non-minimal length header: decodes, but is not
		// the canonical encoding.
		"non-canonical header": {append([]byte{0xb8, 0x05}, wire[1:]...), 1 << 20, cborx.ErrNonCanonical},
		// An extra field 6 (sorted last).
		"unknown field": {append(append([]byte{0xa6}, wire[1:]...), 0x06, 0x00), 1 << 20, ErrMalformedEnvelope},
		// Field 1 twice.
		"duplicate key": {append([]byte{0xa6, 0x01, 0x61, 'x'}, wire[1:]...), 1 << 20, ErrMalformedEnvelope},
		"not a map":     {[]byte{0x80}, 1 << 20, ErrMalformedEnvelope},
		"indefinite":    {[]byte{0xbf, 0xff}, 1 << 20, ErrMalformedEnvelope},
		"tagged":        {append([]byte{0xc0}, wire...), 1 << 20, ErrMalformedEnvelope},
		"huge length":   {[]byte{0xa1, 0x03, 0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1 << 20, ErrMalformedEnvelope},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := UnmarshalEnvelope(tc.in, tc.max)
			if err == nil {
				t.Fatalf("accepted: %+v", got)
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrMalformedEnvelope) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}

	var dupErr *cbor.DupMapKeyError
	if _, err := UnmarshalEnvelope(cases["duplicate key"].in, 1<<20); !errors.As(err, &dupErr) {
		t.Errorf("duplicate key not reported as such: %v", err)
	}
	var unkErr *cbor.UnknownFieldError
	if _, err := UnmarshalEnvelope(cases["unknown field"].in, 1<<20); !errors.As(err, &unkErr) {
		t.Errorf("unknown field not reported as such: %v", err)
	}

	// Empty domain or payload type never leaves the decoder.
	bad := *e
	bad.Domain = ""
	if _, err := UnmarshalEnvelope(marshal(t, &bad), 1<<20); !errors.Is(err, ErrMalformedEnvelope) {
		t.Errorf("empty domain: %v", err)
	}
}

func TestCertificateEncoding(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	c := newSession(t, id).Cert
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxCertSize {
		t.Fatalf("certificate is %d bytes, over MaxCertSize %d", len(b), MaxCertSize)
	}
	got, err := UnmarshalCertificate(b, MaxCertSize)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash() != c.Hash() {
		t.Fatal("hash changed across a round trip")
	}
	if err := got.Verify(id.MachineID(), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalCertificate(append(b, 0), MaxCertSize); !errors.Is(err, ErrMalformedCert) {
		t.Fatalf("trailing byte: %v", err)
	}
	// Nil and empty signatures encode identically, so tbs does not depend
	// on which the signer used.
	u, v := c.Clone(), c.Clone()
	u.HWSig, v.HWSig = nil, []byte{}
	if u.Hash() != v.Hash() {
		t.Fatal("nil and empty byte strings encode differently")
	}
}

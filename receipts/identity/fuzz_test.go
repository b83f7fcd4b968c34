package identity

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

const fuzzMaxSize = 64 << 10

// fuzzSeeds returns valid encodings: envelopes with small and empty
// payloads and their certificate.
func fuzzSeeds(f *testing.F) (envelopes [][]byte, cert []byte) {
	id := openIdentity(f, hwkey.BackendSoftware, f.TempDir())
	s := newSession(f, id)
	for _, p := range [][]byte{nil, []byte("x"), {0xa2, 0x01, 0x02, 0x03, 0x04}} {
		envelopes = append(envelopes, marshal(f, seal(f, s, heartbeatDomain, p)))
	}
	cert, err := s.Cert.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	return envelopes, cert
}

func FuzzUnmarshalEnvelope(f *testing.F) {
	envs, _ := fuzzSeeds(f)
	for _, e := range envs {
		f.Add(e)
		f.Add(e[:len(e)/2])
	}
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := UnmarshalEnvelope(b, fuzzMaxSize)
		if err != nil {
			return
		}
		re, err := e.Marshal()
		if err != nil {
			t.Fatalf("decoded envelope does not encode: %v", err)
		}
		if !bytes.Equal(re, b) {
			t.Fatal("accepted a non-canonical encoding")
		}
		// Verification of whatever decoded must not panic.
		_ = e.VerifySignature()
		_ = e.Verify(e.Domain, MachineID{}, t0)
		_, _ = e.Cert.Peer()
		_ = e.Cert.Hash()
	})
}

func FuzzUnmarshalCertificate(f *testing.F) {
	_, cert := fuzzSeeds(f)
	f.Add(cert)
	f.Add(cert[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := UnmarshalCertificate(b, MaxCertSize)
		if err != nil {
			return
		}
		re, err := c.Marshal()
		if err != nil || !bytes.Equal(re, b) {
			t.Fatalf("accepted a non-canonical encoding (%v)", err)
		}
		_ = c.Verify(MachineID{}, t0)
		_, _ = c.SessionKey()
		_, _ = c.Machine()
	})
}

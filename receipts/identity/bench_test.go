package identity

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

func benchEnvelope(b *testing.B) (*Identity, *Session, *Envelope) {
	id := openIdentity(b, hwkey.BackendSoftware, b.TempDir())
	s := newSession(b, id)
	return id, s, seal(b, s, heartbeatDomain, make([]byte, 128))
}

func BenchmarkEnvelopeVerifySignature(b *testing.B) {
	_, _, e := benchEnvelope(b)
	for b.Loop() {
		if err := e.VerifySignature(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCertificateVerify(b *testing.B) {
	id, s, _ := benchEnvelope(b)
	for b.Loop() {
		if err := s.Cert.Verify(id.MachineID(), t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCertificateHash(b *testing.B) {
	_, s, _ := benchEnvelope(b)
	for b.Loop() {
		_ = s.Cert.Hash()
	}
}

func BenchmarkUnmarshalEnvelope(b *testing.B) {
	_, _, e := benchEnvelope(b)
	wire := marshal(b, e)
	b.SetBytes(int64(len(wire)))
	for b.Loop() {
		if _, err := UnmarshalEnvelope(wire, 64<<10); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	_, s, _ := benchEnvelope(b)
	payload := make([]byte, 128)
	for b.Loop() {
		if _, err := s.Seal(heartbeatDomain, "tenzro.test", payload); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkIssueSession(b *testing.B, backend hwkey.Backend) {
	id := openIdentity(b, backend, b.TempDir())
	p := newPeerKey(b)
	for b.Loop() {
		if _, err := id.IssueSession(p, t0, t0.Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssueSessionSoftware(b *testing.B) { benchmarkIssueSession(b, hwkey.BackendSoftware) }
func BenchmarkIssueSessionTPMSim(b *testing.B)   { benchmarkIssueSession(b, hwkey.BackendTPMSim) }

package identity

import (
	"bytes"
	"crypto/x509"
	"errors"
	"testing"
)

// TestRegistrationSignatures: the three signatures verify over the payload
// with the identity's and peer's public keys, and fail over another
// payload, with another machine's keys or with another peer ID.
func TestRegistrationSignatures(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			id, other := openIdentity(t, b, t.TempDir()), openIdentity(t, b, t.TempDir())
			pk, otherPK := newPeerKey(t), newPeerKey(t)
			payload := []byte("chain, operator, machine, peer")
			hw, pq, err := id.SignRegistration(payload)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := SignRegistrationPeer(pk, payload)
			if err != nil {
				t.Fatal(err)
			}
			der := func(i *Identity) []byte {
				d, err := x509.MarshalPKIXPublicKey(i.HWPublicKey())
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			if err := VerifyRegistrationHW(der(id), payload, hw); err != nil {
				t.Fatal(err)
			}
			if err := VerifyRegistrationPQ(id.PQPublicKey().Bytes(), payload, pq); err != nil {
				t.Fatal(err)
			}
			if err := VerifyRegistrationPeer(peerOf(t, pk), payload, ps); err != nil {
				t.Fatal(err)
			}
			other2 := bytes.Clone(payload)
			other2[0] ^= 1
			for name, err := range map[string]error{
				"hw, other payload":   VerifyRegistrationHW(der(id), other2, hw),
				"hw, other machine":   VerifyRegistrationHW(der(other), payload, hw),
				"hw, bad key":         VerifyRegistrationHW([]byte{1, 2}, payload, hw),
				"pq, other payload":   VerifyRegistrationPQ(id.PQPublicKey().Bytes(), other2, pq),
				"pq, other machine":   VerifyRegistrationPQ(other.PQPublicKey().Bytes(), payload, pq),
				"peer, other payload": VerifyRegistrationPeer(peerOf(t, pk), other2, ps),
				"peer, other peer":    VerifyRegistrationPeer(peerOf(t, otherPK), payload, ps),
			} {
				want := map[byte]error{'h': ErrBadRegistrationHW, 'p': ErrBadRegistrationPQ}[name[0]]
				if name[:4] == "peer" {
					want = ErrBadRegistrationPeer
				}
				if !errors.Is(err, want) {
					t.Errorf("%s: %v, want %v", name, err, want)
				}
			}
			// A registration signature is no certificate signature: the
			// message starts with the domain, never with CBOR.
			if msg := RegistrationMessage(payload); !bytes.HasPrefix(msg, []byte(RegistrationDomain+"\x00")) {
				t.Fatalf("message %q lacks the domain", msg)
			}
		})
	}
}

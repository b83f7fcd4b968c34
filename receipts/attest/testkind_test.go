package attest_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// testDevice is a device on a fresh test root, and that root's policy.
func testDevice(t testing.TB, seed byte) (*attest.TestDevice, *attest.Policy) {
	t.Helper()
	_, root, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := attest.NewTestDevice(root, [32]byte{seed})
	return d, &attest.Policy{TestRoot: root.Public().(ed25519.PublicKey)}
}

// TestTestKindVerifiesOnlyUnderItsTestRoot: a test attestation verifies,
// labelled TEST-ONLY, under the policy of its own test root, through the
// encoding a provider announces; every real-root policy (AMD's embedded
// roots, configured vendor roots, a cache in front) refuses it as
// test_root, another test root refuses it, and a test-root policy refuses
// real vendor attestations.
func TestTestKindVerifiesOnlyUnderItsTestRoot(t *testing.T) {
	dev, pol := testDevice(t, 1)
	pub := attesttest.SessionPub(t)
	b, err := dev.Attest(pub).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	att, err := attest.Unmarshal(b)
	if err != nil {
		t.Fatalf("attest.Unmarshal of a test attestation: %v", err)
	}
	res, err := attest.Verify(att, session(pub), pol, now)
	if err != nil {
		t.Fatalf("attest.Verify under its test root: %v", err)
	}
	if res.Kind != attest.KindTest || res.ProductLine != "TEST-ONLY" || len(res.Measurement) != 48 || !bytes.Equal(res.SessionPub, pub) {
		t.Fatalf("result %+v: want kind test, labelled TEST-ONLY, bound to the session key", res)
	}

	real := map[string]*attest.Policy{"AMD's embedded roots": {}, "configured vendor roots": attesttest.Policy(t),
		"embedded roots with a cache": {Cache: attest.NewCache(8)}}
	for name, p := range real {
		t.Run(name, func(t *testing.T) {
			refused(t, att, session(pub), p, attest.ErrTestRoot, "test_root")
			if _, err := attest.Verify(att, session(pub), p, now); !errors.Is(err, attest.ErrChain) {
				t.Fatalf("a test attestation is refused as the verifier's trust (ErrChain), got %v", err)
			}
		})
	}
	_, other := testDevice(t, 2)
	refused(t, att, session(pub), other, attest.ErrChain, "chain")
	refused(t, att, session(attesttest.SessionPub(t)), pol, attest.ErrWrongKey, "wrong_key")
	refused(t, attesttest.Attestation(t, pub), session(pub), pol, attest.ErrChain, "chain")
}

// TestTestKindForgeries: a test attestation altered in any part, or
// certified by a root the policy does not name, is refused.
func TestTestKindForgeries(t *testing.T) {
	dev, pol := testDevice(t, 3)
	pub := attesttest.SessionPub(t)
	rogue, _ := testDevice(t, 4)
	cases := map[string]func(a *attest.Attestation){
		"report signature": func(a *attest.Attestation) { a.Report[100] ^= 1 },
		"device key":       func(a *attest.Attestation) { a.EKCert = rogue.Attest(pub).EKCert },
		"certification":    func(a *attest.Attestation) { a.Intermediate[0] ^= 1 },
		"root swapped in":  func(a *attest.Attestation) { *a = *rogue.Attest(pub); a.Root = pol.TestRoot },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			att := dev.Attest(pub)
			mutate(att)
			refused(t, att, session(pub), pol, attest.ErrChain, "chain")
		})
	}
	short := dev.Attest(pub)
	short.Report = short.Report[:64]
	refused(t, short, session(pub), pol, attest.ErrMalformed, "malformed")
	expired := session(pub)
	expired.NotAfter = now
	refused(t, dev.Attest(pub), expired, pol, attest.ErrSessionExpired, "session_expired")
}

// TestTestFilesRoundTrip: a device file and a root file read back to the
// same device and root; a device file with a broken certification is
// refused, and another root's device does not verify.
func TestTestFilesRoundTrip(t *testing.T) {
	dev, pol := testDevice(t, 5)
	got, err := attest.ParseTestDevice(dev.MarshalFile())
	if err != nil {
		t.Fatal(err)
	}
	root, err := attest.ParseTestRoot(attest.MarshalTestRoot(dev.Root()))
	if err != nil || !root.Equal(pol.TestRoot) || !got.Root().Equal(pol.TestRoot) {
		t.Fatalf("root file: %x, %v; want %x", root, err, pol.TestRoot)
	}
	pub := attesttest.SessionPub(t)
	if _, err := attest.Verify(got.Attest(pub), session(pub), pol, now); err != nil {
		t.Fatalf("attestation of the re-read device: %v", err)
	}
	if _, err := attest.ParseTestDevice(attest.MarshalTestRoot(dev.Root())); !errors.Is(err, attest.ErrTestFile) {
		t.Fatalf("a root file read as a device: %v", err)
	}
	blk, _ := pem.Decode(dev.MarshalFile())
	blk.Bytes[len(blk.Bytes)-1] ^= 1 // the root's certification
	if _, err := attest.ParseTestDevice(pem.EncodeToMemory(blk)); !errors.Is(err, attest.ErrTestFile) {
		t.Fatalf("a device file with a broken certification: %v", err)
	}
	other, _ := testDevice(t, 6)
	if _, err := attest.Verify(other.Attest(pub), session(pub), pol, now); !errors.Is(err, attest.ErrChain) {
		t.Fatalf("a device of another root verified: %v", err)
	}
}

// FuzzParseTestFiles: the TEST-ONLY file decoders never panic, refuse
// with ErrTestFile, and a device they accept was certified by its root.
func FuzzParseTestFiles(f *testing.F) {
	dev, _ := testDevice(f, 7)
	f.Add(dev.MarshalFile())
	f.Add(attest.MarshalTestRoot(dev.Root()))
	f.Add([]byte("-----BEGIN TENZRO TEST-ONLY ATTESTATION DEVICE-----\n-----END TENZRO TEST-ONLY ATTESTATION DEVICE-----\n"))
	pub := attesttest.SessionPub(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := attest.ParseTestRoot(raw); err != nil && !errors.Is(err, attest.ErrTestFile) {
			t.Fatalf("root: %v is not ErrTestFile", err)
		}
		d, err := attest.ParseTestDevice(raw)
		if err != nil {
			if !errors.Is(err, attest.ErrTestFile) {
				t.Fatalf("device: %v is not ErrTestFile", err)
			}
			return
		}
		p := &attest.Policy{TestRoot: d.Root()}
		if _, err := attest.Verify(d.Attest(pub), session(pub), p, now); err != nil {
			t.Fatalf("an accepted device does not attest under its own root: %v", err)
		}
	})
}

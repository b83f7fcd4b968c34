package attest

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"errors"
	"fmt"
)

// PEM block types of the TEST-ONLY files: the root a devnet node trusts
// ([attest] test_root) and a provider's device ([provider.attestation]
// source = "test"). The names say what they are to anyone who opens them.
const (
	TestRootPEM   = "TENZRO TEST-ONLY ATTESTATION ROOT"
	TestDevicePEM = "TENZRO TEST-ONLY ATTESTATION DEVICE"
)

// testDeviceFileSize is a device file's block: the device key's seed, the
// root's public key and the root's certification of the device key.
const testDeviceFileSize = ed25519.SeedSize + ed25519.PublicKeySize + ed25519.SignatureSize

// ErrTestFile: a TEST-ONLY root or device file that does not parse.
var ErrTestFile = errors.New("attest: bad TEST-ONLY file")

// MarshalTestRoot is the PEM file of a test root's public key.
func MarshalTestRoot(pub ed25519.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: TestRootPEM, Headers: map[string]string{"Warning": "test only: proves nothing"}, Bytes: pub})
}

// ParseTestRoot reads a test root file (MarshalTestRoot).
func ParseTestRoot(raw []byte) (ed25519.PublicKey, error) {
	b, err := onePEM(raw, TestRootPEM, ed25519.PublicKeySize)
	if err != nil {
		return nil, err
	}
	return ed25519.PublicKey(b), nil
}

// MarshalFile is the device's PEM file. It holds the device's private key:
// anyone with it "attests" anything, which is why only a test root trusts it.
func (d *TestDevice) MarshalFile() []byte {
	b := append(append(bytes.Clone(d.key.Seed()), d.root...), d.cert...)
	return pem.EncodeToMemory(&pem.Block{Type: TestDevicePEM, Headers: map[string]string{"Warning": "test only: proves nothing"}, Bytes: b})
}

// ParseTestDevice reads a device file (MarshalFile) and checks that its
// root certified it.
func ParseTestDevice(raw []byte) (*TestDevice, error) {
	b, err := onePEM(raw, TestDevicePEM, testDeviceFileSize)
	if err != nil {
		return nil, err
	}
	key := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
	root := ed25519.PublicKey(bytes.Clone(b[ed25519.SeedSize : ed25519.SeedSize+ed25519.PublicKeySize]))
	cert := bytes.Clone(b[ed25519.SeedSize+ed25519.PublicKeySize:])
	if !ed25519.Verify(root, append([]byte(testCertDomain), key.Public().(ed25519.PublicKey)...), cert) {
		return nil, fmt.Errorf("%w: the device's root did not certify its key", ErrTestFile)
	}
	return &TestDevice{key: key, root: root, cert: cert}, nil
}

// onePEM is the bytes of the single PEM block of type typ and size n in
// raw, with nothing but whitespace around it.
func onePEM(raw []byte, typ string, n int) ([]byte, error) {
	b, rest := pem.Decode(raw)
	switch {
	case b == nil:
		return nil, fmt.Errorf("%w: no PEM block (want %q)", ErrTestFile, typ)
	case b.Type != typ:
		return nil, fmt.Errorf("%w: PEM block %q, want %q", ErrTestFile, b.Type, typ)
	case len(b.Bytes) != n:
		return nil, fmt.Errorf("%w: %q block of %d bytes, want %d", ErrTestFile, typ, len(b.Bytes), n)
	case len(bytes.TrimSpace(rest)) != 0:
		return nil, fmt.Errorf("%w: data after the %q block", ErrTestFile, typ)
	}
	return b.Bytes, nil
}

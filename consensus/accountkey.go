package consensus

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// accountKeyPEM is the PEM block type of an account key file (PKCS #8).
const accountKeyPEM = "PRIVATE KEY"

// NewAccountKey creates an Ed25519 account key and writes it to path
// (PKCS #8 PEM, mode 0600), refusing to overwrite an existing file.
func NewAccountKey(path string) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("consensus: account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("consensus: account key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("consensus: account key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("consensus: account key: %w", err)
	}
	if err := errors.Join(pem.Encode(f, &pem.Block{Type: accountKeyPEM, Bytes: der}), f.Close()); err != nil {
		return nil, fmt.Errorf("consensus: write account key %s: %w", path, err)
	}
	return priv, nil
}

// ReadAccountKey reads an account key NewAccountKey wrote.
func ReadAccountKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("consensus: account key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != accountKeyPEM {
		return nil, fmt.Errorf("consensus: account key %s: no %q PEM block", path, accountKeyPEM)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("consensus: account key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("consensus: account key %s: %T is not Ed25519", path, k)
	}
	return priv, nil
}

// LoadOrCreateAccountKey reads the key at path, creating it first if the
// file does not exist.
func LoadOrCreateAccountKey(path string) (ed25519.PrivateKey, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return NewAccountKey(path)
	}
	return ReadAccountKey(path)
}

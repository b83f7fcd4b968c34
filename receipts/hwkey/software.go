package hwkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tenzrod/tenzrod/receipts/internal/keyfile"
)

// SoftwareKeyFile is the name of the software backend's key file in
// Config.Dir.
const SoftwareKeyFile = "hwkey-software.pem"

const softwarePEMType = "PRIVATE KEY"

type softwareKey struct {
	priv *ecdsa.PrivateKey
	guard
}

func openSoftware(dir string) (Key, error) {
	path := filepath.Join(dir, SoftwareKeyFile)
	der, created, err := keyfile.LoadOrCreate(path, softwarePEMType, func() ([]byte, error) {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		return x509.MarshalPKCS8PrivateKey(priv)
	})
	if err != nil {
		return nil, fmt.Errorf("hwkey: software key: %w", err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("hwkey: software key %s: %w", path, err)
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, fmt.Errorf("hwkey: software key %s is not a P-256 ECDSA key", path)
	}
	if created {
		slog.Info("hwkey: created software identity key", "path", path)
	}
	return &softwareKey{priv: priv}, nil
}

func (k *softwareKey) Backend() Backend { return BackendSoftware }

func (k *softwareKey) Public() *ecdsa.PublicKey { return &k.priv.PublicKey }

func (k *softwareKey) Sign(digest []byte) ([]byte, error) {
	return k.guard.sign(digest, func() ([]byte, error) {
		sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest)
		if err != nil {
			return nil, fmt.Errorf("hwkey: software sign: %w", err)
		}
		return sig, nil
	})
}

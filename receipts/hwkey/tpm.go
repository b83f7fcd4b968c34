package hwkey

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/google/go-tpm/tpm2"
	"github.com/google/go-tpm/tpm2/transport"
	"github.com/google/go-tpm/tpm2/transport/linuxtpm"
)

// tpmUniqueLabel is hashed into the unique field of the real TPM's key
// template, so the identity key differs from any other application's
// primary key built from the standard templates.
const tpmUniqueLabel = "tenzro/v1/hwkey"

// keyTemplate is the fixed public template of the identity key: an
// unrestricted ECC P-256 signing key with scheme ECDSA/SHA-256 whose
// private part never leaves the TPM. unique (at most 32 bytes) is an input
// to primary-key derivation: the same hierarchy seed and the same unique
// always give the same key.
func keyTemplate(unique []byte) tpm2.TPMTPublic {
	return tpm2.TPMTPublic{
		Type:    tpm2.TPMAlgECC,
		NameAlg: tpm2.TPMAlgSHA256,
		ObjectAttributes: tpm2.TPMAObject{
			FixedTPM:            true,
			FixedParent:         true,
			SensitiveDataOrigin: true,
			UserWithAuth:        true,
			NoDA:                true,
			SignEncrypt:         true,
		},
		Parameters: tpm2.NewTPMUPublicParms(tpm2.TPMAlgECC, &tpm2.TPMSECCParms{
			Symmetric: tpm2.TPMTSymDefObject{Algorithm: tpm2.TPMAlgNull},
			Scheme: tpm2.TPMTECCScheme{
				Scheme: tpm2.TPMAlgECDSA,
				Details: tpm2.NewTPMUAsymScheme(tpm2.TPMAlgECDSA,
					&tpm2.TPMSSigSchemeECDSA{HashAlg: tpm2.TPMAlgSHA256}),
			},
			CurveID: tpm2.TPMECCNistP256,
			KDF:     tpm2.TPMTKDFScheme{Scheme: tpm2.TPMAlgNull},
		}),
		Unique: tpm2.NewTPMUPublicID(tpm2.TPMAlgECC, &tpm2.TPMSECCPoint{
			X: tpm2.TPM2BECCParameter{Buffer: unique},
		}),
	}
}

// primary is a loaded primary identity key.
type primary struct {
	handle tpm2.TPMHandle
	name   tpm2.TPM2BName
	pub    *ecdsa.PublicKey
}

// createPrimary derives the identity key in the owner hierarchy (empty
// owner authorization) and loads it.
func createPrimary(t transport.TPM, unique []byte) (*primary, error) {
	rsp, err := tpm2.CreatePrimary{
		PrimaryHandle: tpm2.TPMRHOwner,
		InPublic:      tpm2.New2B(keyTemplate(unique)),
	}.Execute(t)
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm create primary key: %w", err)
	}
	p := &primary{handle: rsp.ObjectHandle, name: rsp.Name}
	pub, err := primaryPublic(rsp.OutPublic)
	if err != nil {
		return nil, errors.Join(err, flush(t, p.handle))
	}
	p.pub = pub
	return p, nil
}

func primaryPublic(out tpm2.TPM2BPublic) (*ecdsa.PublicKey, error) {
	area, err := out.Contents()
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm public area: %w", err)
	}
	params, err := area.Parameters.ECCDetail()
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm public parameters: %w", err)
	}
	point, err := area.Unique.ECC()
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm public point: %w", err)
	}
	if params.CurveID != tpm2.TPMECCNistP256 {
		return nil, fmt.Errorf("hwkey: tpm returned curve %v, want P-256", params.CurveID)
	}
	pub, err := tpm2.ECDSAPub(params, point)
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm public key: %w", err)
	}
	// ECDH validates the point (crypto/elliptic's IsOnCurve is deprecated).
	if _, err := pub.ECDH(); err != nil {
		return nil, fmt.Errorf("hwkey: tpm public key is not on P-256: %w", err)
	}
	return pub, nil
}

// sign signs a SHA-256 digest with the loaded key and returns an ASN.1 DER
// signature, checked against the public key before it is returned.
func (p *primary) sign(t transport.TPM, digest []byte) ([]byte, error) {
	rsp, err := tpm2.Sign{
		KeyHandle: tpm2.NamedHandle{Handle: p.handle, Name: p.name},
		Digest:    tpm2.TPM2BDigest{Buffer: digest},
		InScheme: tpm2.TPMTSigScheme{
			Scheme: tpm2.TPMAlgECDSA,
			Details: tpm2.NewTPMUSigScheme(tpm2.TPMAlgECDSA,
				&tpm2.TPMSSchemeHash{HashAlg: tpm2.TPMAlgSHA256}),
		},
		Validation: tpm2.TPMTTKHashCheck{Tag: tpm2.TPMSTHashCheck},
	}.Execute(t)
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm sign: %w", err)
	}
	sig, err := rsp.Signature.Signature.ECDSA()
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm signature: %w", err)
	}
	der, err := asn1.Marshal(struct{ R, S *big.Int }{
		R: new(big.Int).SetBytes(sig.SignatureR.Buffer),
		S: new(big.Int).SetBytes(sig.SignatureS.Buffer),
	})
	if err != nil {
		return nil, fmt.Errorf("hwkey: encode tpm signature: %w", err)
	}
	if !ecdsa.VerifyASN1(p.pub, digest, der) {
		return nil, errors.New("hwkey: tpm produced a signature that does not verify")
	}
	return der, nil
}

func flush(t transport.TPM, h tpm2.TPMHandle) error {
	if _, err := (tpm2.FlushContext{FlushHandle: h}).Execute(t); err != nil {
		return fmt.Errorf("hwkey: tpm flush handle %#x: %w", uint32(h), err)
	}
	return nil
}

// tpmKey is a primary key held loaded in a TPM for the key's lifetime.
type tpmKey struct {
	backend Backend
	mu      sync.Mutex
	t       transport.TPMCloser // nil once closed
	p       *primary
}

// ProbeTPM reports whether a TPM device opens at device (DefaultDevice if
// empty). It creates no key and leaves nothing behind, so a command can
// choose a backend before it writes anything.
func ProbeTPM(device string) error {
	if device == "" {
		device = DefaultDevice
	}
	t, err := linuxtpm.Open(device)
	if err != nil {
		return fmt.Errorf("hwkey: tpm device %s: %w", device, err)
	}
	return t.Close()
}

func openTPM(device string) (Key, error) {
	t, err := linuxtpm.Open(device)
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm device %s: %w (use backend %q or %q)",
			device, err, BackendTPMSim, BackendSoftware)
	}
	label := sha256.Sum256([]byte(tpmUniqueLabel))
	return newTPMKey(BackendTPM, t, label[:])
}

// newTPMKey takes ownership of t: it is closed when the key is, or on error.
func newTPMKey(b Backend, t transport.TPMCloser, unique []byte) (*tpmKey, error) {
	p, err := createPrimary(t, unique)
	if err != nil {
		return nil, errors.Join(err, t.Close())
	}
	return &tpmKey{backend: b, t: t, p: p}, nil
}

func (k *tpmKey) Backend() Backend { return k.backend }

func (k *tpmKey) Public() *ecdsa.PublicKey { return k.p.pub }

func (k *tpmKey) Sign(digest []byte) ([]byte, error) {
	if err := checkDigest(digest); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.t == nil {
		return nil, ErrClosed
	}
	return k.p.sign(k.t, digest)
}

// Close flushes the key's handle and closes the TPM connection.
func (k *tpmKey) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.t == nil {
		return nil
	}
	err := errors.Join(flush(k.t, k.p.handle), k.t.Close())
	k.t = nil
	return err
}

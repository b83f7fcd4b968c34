package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/internal/keyfile"
)

// PQSeedFile is the name of the ML-DSA-65 seed file in the identity
// directory (hwkey.Config.Dir).
const PQSeedFile = "identity-mldsa65.seed"

const pqSeedPEMType = "TENZRO ML-DSA-65 SEED"

// Identity is a machine's long-term identity: its hardware key and its
// ML-DSA-65 key. It is safe for concurrent use.
type Identity struct {
	hw      hwkey.Key
	hwDER   []byte
	pq      *mldsa65.PrivateKey
	pqPub   *mldsa65.PublicKey
	pqBytes []byte
	id      MachineID
}

// Open loads the machine identity described by cfg, creating its keys on
// first use. cfg.Dir is required for every backend: it holds the ML-DSA-65
// seed (and, for tpm-sim and software, the hardware key's state).
func Open(cfg hwkey.Config) (*Identity, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	if cfg.Dir == "" {
		return nil, errors.New("identity: an identity directory (Config.Dir) is required")
	}
	path := filepath.Join(cfg.Dir, PQSeedFile)
	seed, created, err := keyfile.LoadOrCreate(path, pqSeedPEMType, func() ([]byte, error) {
		b := make([]byte, mldsa65.SeedSize)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("identity: ml-dsa-65 seed: %w", err)
	}
	if len(seed) != mldsa65.SeedSize {
		return nil, fmt.Errorf("identity: ml-dsa-65 seed %s is %d bytes, want %d", path, len(seed), mldsa65.SeedSize)
	}
	if created {
		slog.Info("identity: created ml-dsa-65 identity key", "path", path)
	}
	pqPub, pq := mldsa65.NewKeyFromSeed((*[mldsa65.SeedSize]byte)(seed))

	hw, err := hwkey.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	hwDER, err := x509.MarshalPKIXPublicKey(hw.Public())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("identity: encode hardware key: %w", err), hw.Close())
	}
	pqBytes := pqPub.Bytes()
	return &Identity{
		hw:      hw,
		hwDER:   hwDER,
		pq:      pq,
		pqPub:   pqPub,
		pqBytes: pqBytes,
		id:      ComputeMachineID(hwDER, pqBytes),
	}, nil
}

// MachineID returns the machine's ID.
func (id *Identity) MachineID() MachineID { return id.id }

// Backend returns the hardware key's backend.
func (id *Identity) Backend() hwkey.Backend { return id.hw.Backend() }

// HWPublicKey returns the hardware P-256 public key.
func (id *Identity) HWPublicKey() *ecdsa.PublicKey { return id.hw.Public() }

// PQPublicKey returns the ML-DSA-65 public key.
func (id *Identity) PQPublicKey() *mldsa65.PublicKey { return id.pqPub }

// Close releases the hardware key.
func (id *Identity) Close() error { return id.hw.Close() }

// IssueSession creates a fresh software P-256 session key and a certificate
// for it, bound to the libp2p peer of peerKey and valid from notBefore to
// notAfter (millisecond precision). The hardware key, the ML-DSA-65 key and
// the peer key all sign it: the machine vouches for the session, and the
// peer consents to being bound to this machine, so nobody can certify a
// session for someone else's peer ID.
func (id *Identity) IssueSession(peerKey crypto.PrivKey, notBefore, notAfter time.Time) (*Session, error) {
	if peerKey == nil {
		return nil, errors.New("identity: issue session: no peer key")
	}
	peerID, err := peer.IDFromPrivateKey(peerKey)
	if err != nil {
		return nil, fmt.Errorf("identity: issue session: peer ID: %w", err)
	}
	if !notAfter.After(notBefore) {
		return nil, fmt.Errorf("identity: issue session: not-after %s is not after not-before %s", notAfter, notBefore)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("identity: issue session: generate key: %w", err)
	}
	sessionDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("identity: issue session: encode key: %w", err)
	}
	c := Certificate{
		Version:    CertVersion,
		Backend:    string(id.hw.Backend()),
		HWPub:      id.hwDER,
		PQPub:      id.pqBytes,
		MachineID:  id.id[:],
		SessionPub: sessionDER,
		PeerID:     []byte(peerID),
		NotBefore:  notBefore.UnixMilli(),
		NotAfter:   notAfter.UnixMilli(),
	}
	c = c.Clone()
	tbs, err := c.tbs()
	if err != nil {
		return nil, fmt.Errorf("identity: issue session: %w", err)
	}
	digest := sha256.Sum256(tbs)
	if c.HWSig, err = id.hw.Sign(digest[:]); err != nil {
		return nil, fmt.Errorf("identity: issue session: %w", err)
	}
	c.PQSig = make([]byte, mldsa65.SignatureSize)
	if err := mldsa65.SignTo(id.pq, tbs, nil, true, c.PQSig); err != nil {
		return nil, fmt.Errorf("identity: issue session: ml-dsa-65 sign: %w", err)
	}
	if c.PeerSig, err = peerKey.Sign(tbs); err != nil {
		return nil, fmt.Errorf("identity: issue session: peer key sign: %w", err)
	}
	if err := c.Verify(id.id, time.UnixMilli(c.NotBefore)); err != nil {
		return nil, fmt.Errorf("identity: issue session: self-check: %w", err)
	}
	return &Session{Cert: c, priv: priv}, nil
}

package testnet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"fmt"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Provider is a freshly generated provider machine identity.
type Provider struct {
	HWKey     *ecdsa.PrivateKey
	HWPubDER  []byte
	PQKey     *mldsa65.PrivateKey
	PQPub     []byte
	MachineID identity.MachineID
	PeerKey   crypto.PrivKey
	PeerID    peer.ID
}

// NewProvider generates a P-256 hardware key, an ML-DSA-65 key and a
// libp2p Ed25519 peer key, and derives the machine ID.
func NewProvider() (*Provider, error) {
	hw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testnet: hardware key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&hw.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("testnet: hardware key: %w", err)
	}
	pq, pqPriv, err := mldsa65.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testnet: ML-DSA-65 key: %w", err)
	}
	peerKey, pub, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testnet: peer key: %w", err)
	}
	pid, err := peer.IDFromPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("testnet: peer ID: %w", err)
	}
	pqb := pq.Bytes()
	return &Provider{HWKey: hw, HWPubDER: der, PQKey: pqPriv, PQPub: pqb, MachineID: identity.ComputeMachineID(der, pqb),
		PeerKey: peerKey, PeerID: pid}, nil
}

// Register returns the registration payload for this machine submitted
// by operator on chainID, signed by the machine's keys and its peer key.
// The keys are in memory, so signing cannot fail short of a broken
// random source; that panics.
func (p *Provider) Register(chainID string, operator terms.AccountID, bond, unbondingSecs uint64) *ledger.ProviderRegister {
	reg := &ledger.ProviderRegister{
		MachineID: p.MachineID, HWPubDER: p.HWPubDER, PQPub: p.PQPub,
		PeerID: p.PeerID.String(), Bond: bond, UnbondingSecs: unbondingSecs,
	}
	payload, err := reg.SigningPayload(chainID, operator)
	if err == nil {
		msg := identity.RegistrationMessage(payload)
		digest := sha256.Sum256(msg)
		reg.HWSig, err = ecdsa.SignASN1(rand.Reader, p.HWKey, digest[:])
		if err == nil {
			reg.PQSig = make([]byte, mldsa65.SignatureSize)
			err = mldsa65.SignTo(p.PQKey, msg, nil, true, reg.PQSig)
		}
		if err == nil {
			reg.PeerSig, err = identity.SignRegistrationPeer(p.PeerKey, payload)
		}
	}
	if err != nil {
		panic(fmt.Sprintf("testnet: sign registration with in-memory keys: %v", err))
	}
	return reg
}

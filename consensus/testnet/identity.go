package testnet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"fmt"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Provider is a freshly generated provider machine identity.
type Provider struct {
	HWKey     *ecdsa.PrivateKey
	HWPubDER  []byte
	PQPub     []byte
	MachineID identity.MachineID
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
	pq, _, err := mldsa65.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testnet: ML-DSA-65 key: %w", err)
	}
	_, pub, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testnet: peer key: %w", err)
	}
	pid, err := peer.IDFromPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("testnet: peer ID: %w", err)
	}
	pqb := pq.Bytes()
	return &Provider{HWKey: hw, HWPubDER: der, PQPub: pqb, MachineID: identity.ComputeMachineID(der, pqb), PeerID: pid}, nil
}

// Register returns the registration payload for this machine.
func (p *Provider) Register(bond, unbondingSecs uint64) *consensus.ProviderRegister {
	return &consensus.ProviderRegister{
		MachineID: p.MachineID, HWPubDER: p.HWPubDER, PQPub: p.PQPub,
		PeerID: p.PeerID.String(), Bond: bond, UnbondingSecs: unbondingSecs,
	}
}

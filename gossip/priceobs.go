package gossip

import (
	"crypto/ed25519"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ObserverDomain prefixes the bytes an observer's operator key signs, so an
// observation signature can never be taken for a transaction or a receipt.
const ObserverDomain = "tenzro/v1/price-obs/observer\x00"

// Bounds on an observation's numbers; anything outside is rejected.
const (
	maxObsLatencyMs = 10 * 60 * 1000
	maxObsTokens    = 1 << 32
	maxPeerIDLen    = 128
)

// PriceObs is what a validator-run routing node measured of one call it
// routed or probed: the price charged, the latency on its own clock and the
// token counts (already capped at the wire byte counts by the gateway).
//
// Observer is the validator's operator account (its Ed25519 public key, as
// in consensus state) and Sig that key's signature over SignBytes. The
// envelope around it is sealed, like every gossip message, by the node's
// session key; admission rests on Sig (see ValidatePriceObs).
type PriceObs struct {
	ProviderPeer    string   `cbor:"1,keyasint" json:"provider_peer"`
	ProviderMachine HexBytes `cbor:"2,keyasint" json:"provider_machine"`
	ModelID         HexBytes `cbor:"3,keyasint" json:"model_id"`
	Price           uint64   `cbor:"4,keyasint" json:"price"` // micro-units charged
	LatencyMs       uint32   `cbor:"5,keyasint" json:"latency_ms"`
	InputTokens     uint64   `cbor:"6,keyasint" json:"input_tokens"`
	OutputTokens    uint64   `cbor:"7,keyasint" json:"output_tokens"`
	Success         bool     `cbor:"8,keyasint" json:"success"`
	TimeMs          int64    `cbor:"9,keyasint" json:"time_ms"`
	Observer        HexBytes `cbor:"10,keyasint" json:"observer"`
	Seq             uint64   `cbor:"11,keyasint" json:"seq"`
	Probe           bool     `cbor:"12,keyasint" json:"probe"` // a synthetic probe, not a buyer's call
	Sig             HexBytes `cbor:"13,keyasint,omitempty" json:"sig"`
}

// Check validates an observation's structure (not its signature).
func (o *PriceObs) Check() error {
	if o.ProviderPeer == "" || len(o.ProviderPeer) > maxPeerIDLen {
		return fmt.Errorf("%w: provider_peer must be 1..%d bytes", errInvalid, maxPeerIDLen)
	}
	if _, err := peer.Decode(o.ProviderPeer); err != nil {
		return fmt.Errorf("%w: provider_peer: %w", errInvalid, err)
	}
	if len(o.ProviderMachine) != hashLen || len(o.ModelID) != hashLen {
		return fmt.Errorf("%w: provider_machine and model_id must be %d bytes", errInvalid, hashLen)
	}
	if len(o.Observer) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: observer must be %d bytes", errInvalid, ed25519.PublicKeySize)
	}
	if len(o.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: sig must be %d bytes", errInvalid, ed25519.SignatureSize)
	}
	if o.LatencyMs > maxObsLatencyMs || o.InputTokens > maxObsTokens || o.OutputTokens > maxObsTokens {
		return fmt.Errorf("%w: latency or token counts out of range", errInvalid)
	}
	return nil
}

// SignBytes is what the observer's operator key signs: the domain and the
// deterministic CBOR of the observation without its signature.
func (o *PriceObs) SignBytes() ([]byte, error) {
	c := *o
	c.Sig = nil
	b, err := cborx.Marshal(&c)
	if err != nil {
		return nil, err
	}
	return append([]byte(ObserverDomain), b...), nil
}

// SignObservation sets o.Observer to the account of priv and signs o.
func SignObservation(o *PriceObs, priv ed25519.PrivateKey) error {
	o.Observer = HexBytes(priv.Public().(ed25519.PublicKey))
	msg, err := o.SignBytes()
	if err != nil {
		return err
	}
	o.Sig = ed25519.Sign(priv, msg)
	return nil
}

// VerifyObserver checks Sig against Observer.
func (o *PriceObs) VerifyObserver() error {
	if len(o.Observer) != ed25519.PublicKeySize || len(o.Sig) != ed25519.SignatureSize {
		return fmt.Errorf("gossip: price observation: no observer signature")
	}
	msg, err := o.SignBytes()
	if err != nil {
		return err
	}
	if !ed25519.Verify(ed25519.PublicKey(o.Observer), msg, o.Sig) {
		return fmt.Errorf("gossip: price observation: observer signature does not verify")
	}
	return nil
}

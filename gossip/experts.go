package gossip

import (
	"fmt"
	"slices"
)

// Limits of an announcement's expert offers.
const (
	maxExpertOffers = 64
	maxOfferLayers  = 256
	maxOfferExperts = 256 // the engine's own limit of experts per layer
	maxLayerIndex   = 1 << 16
)

// ExpertOffer is a set of experts of one MoE model a machine holds: every
// listed expert of every listed layer, at one price per expert-token (one
// input row computed by one expert), in micro-units.
type ExpertOffer struct {
	ModelID       HexBytes `cbor:"1,keyasint" json:"model_id"`
	Layers        []uint32 `cbor:"2,keyasint" json:"layers"`
	Experts       []uint32 `cbor:"3,keyasint" json:"experts"`
	PricePerToken uint64   `cbor:"4,keyasint" json:"price_per_token"`
}

// Holds reports whether the offer covers expert e of layer l.
func (o *ExpertOffer) Holds(l, e uint32) bool {
	return slices.Contains(o.Layers, l) && slices.Contains(o.Experts, e)
}

// MoEShape is what a gateway needs of a MoE model to bound the
// expert-tokens of a call: each token passes Layers expert layers, and in
// each the gate picks TopK experts. It is the serving provider's claim,
// signed in its announcement; anyone with the weights can refute it.
type MoEShape struct {
	Layers uint32 `cbor:"1,keyasint" json:"layers"`
	TopK   uint32 `cbor:"2,keyasint" json:"top_k"`
}

// ExpertsPerToken is TopK × Layers: the most expert-tokens one token can
// cost (0 for a nil shape). It cannot overflow: both are bounded by check.
func (s *MoEShape) ExpertsPerToken() uint64 {
	if s == nil {
		return 0
	}
	return uint64(s.TopK) * uint64(s.Layers)
}

// check: a nil shape is a dense model; otherwise 1..maxOfferExperts experts
// per token and 1..maxLayerIndex layers.
func (s *MoEShape) check() error {
	if s == nil {
		return nil
	}
	if s.TopK < 1 || s.TopK > maxOfferExperts || s.Layers < 1 || s.Layers > maxLayerIndex {
		return fmt.Errorf("%w: moe: top_k %d (want 1..%d), layers %d (want 1..%d)", errInvalid, s.TopK, maxOfferExperts, s.Layers, maxLayerIndex)
	}
	return nil
}

// checkExpertOffers validates an announcement's expert offers: each names a
// catalog model once, with strictly ascending layers and experts in range.
func checkExpertOffers(offers []ExpertOffer) error {
	if len(offers) > maxExpertOffers {
		return fmt.Errorf("%w: %d expert offers (max %d)", errInvalid, len(offers), maxExpertOffers)
	}
	if err := checkRepeats("experts", len(offers), func(i int) []byte { return offers[i].ModelID }); err != nil {
		return err
	}
	for i := range offers {
		o := &offers[i]
		if len(o.ModelID) != hashLen {
			return fmt.Errorf("%w: experts[%d].model_id must be %d bytes", errInvalid, i, hashLen)
		}
		if err := checkIndexes(o.Layers, maxOfferLayers, maxLayerIndex); err != nil {
			return fmt.Errorf("%w: experts[%d].layers: %w", errInvalid, i, err)
		}
		if err := checkIndexes(o.Experts, maxOfferExperts, maxOfferExperts); err != nil {
			return fmt.Errorf("%w: experts[%d].experts: %w", errInvalid, i, err)
		}
	}
	return nil
}

// checkIndexes requires 1..maxLen strictly ascending values below limit.
func checkIndexes(s []uint32, maxLen int, limit uint32) error {
	if len(s) == 0 || len(s) > maxLen {
		return fmt.Errorf("%d entries, want 1..%d", len(s), maxLen)
	}
	for i, v := range s {
		if v >= limit {
			return fmt.Errorf("%d is not below %d", v, limit)
		}
		if i > 0 && v <= s[i-1] {
			return fmt.Errorf("not strictly ascending at %d", i)
		}
	}
	return nil
}

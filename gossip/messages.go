package gossip

import (
	"errors"
	"fmt"
	"unicode"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ModelState is a provider's readiness for one model.
type ModelState string

const (
	StateCold    ModelState = "cold"
	StateWarming ModelState = "warming"
	StateWarm    ModelState = "warm"
)

// Structural limits; anything larger is rejected before it is stored.
const (
	maxModels        = 64
	maxNameLen       = 128
	maxEngineLen     = 64
	maxHWClassLen    = 64
	hashLen          = 32
	maxVerifyLevels  = 4
	maxCapacityValue = 1 << 20
)

// Heartbeat is a provider's liveness and load report, sent every 2 s.
type Heartbeat struct {
	MachineID  HexBytes      `cbor:"1,keyasint" json:"machine_id"`
	Seq        uint64        `cbor:"2,keyasint" json:"seq"`
	TimeMs     int64         `cbor:"3,keyasint" json:"time_ms"`
	Models     []ModelStatus `cbor:"4,keyasint" json:"models"`
	InFlight   uint32        `cbor:"5,keyasint" json:"in_flight"`
	Capacity   uint32        `cbor:"6,keyasint" json:"capacity"`
	QueueDepth uint32        `cbor:"7,keyasint" json:"queue_depth"`
	Degraded   bool          `cbor:"8,keyasint" json:"degraded"`
}

// ModelStatus is the state of one served model inside a heartbeat.
type ModelStatus struct {
	ModelID HexBytes   `cbor:"1,keyasint" json:"model_id"`
	State   ModelState `cbor:"2,keyasint" json:"state"`
}

// Announcement lists what a provider serves and at what price.
type Announcement struct {
	MachineID     HexBytes     `cbor:"1,keyasint" json:"machine_id"`
	Seq           uint64       `cbor:"2,keyasint" json:"seq"`
	TimeMs        int64        `cbor:"3,keyasint" json:"time_ms"`
	Models        []ModelOffer `cbor:"4,keyasint" json:"models"`
	Region        string       `cbor:"5,keyasint" json:"region"`
	HardwareClass string       `cbor:"6,keyasint" json:"hardware_class"`
	Capacity      uint32       `cbor:"7,keyasint" json:"capacity"`
	// Standby, when set, offers this machine as a session successor. The
	// HPKE key is bound to the machine because the announcement is signed
	// by its certified session key.
	Standby *StandbyOffer `cbor:"8,keyasint,omitempty" json:"standby,omitempty"`
	// Experts are the MoE experts this machine holds for serving nodes
	// (DESIGN.md, Mixture of experts across holders); a machine holding
	// only experts announces no models.
	Experts []ExpertOffer `cbor:"9,keyasint,omitempty" json:"experts,omitempty"`
	// Attestation, when set, is a TEE report binding the session key that
	// signs this announcement (receipts/attest); only a provider whose
	// attestation verifies is quoted at `tee`.
	Attestation *attest.Attestation `cbor:"10,keyasint,omitempty" json:"attestation,omitempty"`
	// NoRetention is the operator's signed claim that prompts and answers
	// are not kept beyond serving them (OpenRouter's data_collection
	// "deny" / zdr). It is a claim, shown as one: nothing can prove it.
	NoRetention bool `cbor:"11,keyasint,omitempty" json:"no_retention,omitempty"`
}

// StandbyOffer is what a provider asks to stand by warm for a session.
type StandbyOffer struct {
	FeePerHour uint64   `cbor:"1,keyasint" json:"fee_per_hour"` // micro-units per hour of standby
	HPKEKey    HexBytes `cbor:"2,keyasint" json:"hpke_key"`     // X-Wing public key (StandbyKeySize bytes)
}

// StandbyKeySize is the size of an X-Wing (X25519 + ML-KEM-768) public key.
const StandbyKeySize = 1216

// ModelOffer is one catalog model a provider serves.
type ModelOffer struct {
	ModelID      HexBytes             `cbor:"1,keyasint" json:"model_id"`
	Name         string               `cbor:"2,keyasint" json:"name"`
	WeightsHash  HexBytes             `cbor:"3,keyasint" json:"weights_hash"`
	Engine       string               `cbor:"4,keyasint" json:"engine"`
	RateCard     RateCard             `cbor:"5,keyasint" json:"rate_card"`
	Verification []terms.Verification `cbor:"6,keyasint" json:"verification"`
	// MoE is the shape of a mixture-of-experts model, nil for a dense
	// one: a gateway caps the expert-tokens it bills at
	// TopK × Layers × tokens (see MoEShape). Omitted when nil, so a dense
	// offer encodes as before.
	MoE *MoEShape `cbor:"7,keyasint,omitempty" json:"moe,omitempty"`
	// Params lists the request parameters beyond the base chat set that
	// this offer honours ("tools", "response_format", "top_k", …; see
	// offer_features.go), sorted, so a buyer's require_parameters and the
	// router's capability filter read one announced claim.
	Params []string `cbor:"8,keyasint,omitempty" json:"params,omitempty"`
	// Quant is the served weights' quantization ("f32", "q8_0", …), as the
	// model file states it; empty when the provider does not say.
	Quant string `cbor:"9,keyasint,omitempty" json:"quant,omitempty"`
}

// RateCard prices an offer (the market's vocabulary, receipts/terms).
type RateCard = terms.RateCard

// Serves reports whether the offer includes verification level.
func (m *ModelOffer) Serves(level terms.Verification) bool {
	for _, v := range m.Verification {
		if v == level {
			return true
		}
	}
	return false
}

// errInvalid marks a structurally invalid message; validators reject it.
var errInvalid = errors.New("invalid message")

// Check validates a heartbeat's structure.
func (h *Heartbeat) Check() error {
	if len(h.MachineID) != hashLen {
		return fmt.Errorf("%w: machine_id must be %d bytes", errInvalid, hashLen)
	}
	if len(h.Models) > maxModels {
		return fmt.Errorf("%w: %d models (max %d)", errInvalid, len(h.Models), maxModels)
	}
	if h.Capacity > maxCapacityValue || h.InFlight > maxCapacityValue || h.QueueDepth > maxCapacityValue {
		return fmt.Errorf("%w: load figures out of range", errInvalid)
	}
	for i, m := range h.Models {
		if len(m.ModelID) != hashLen {
			return fmt.Errorf("%w: models[%d].model_id must be %d bytes", errInvalid, i, hashLen)
		}
		switch m.State {
		case StateCold, StateWarming, StateWarm:
		default:
			return fmt.Errorf("%w: models[%d].state %q", errInvalid, i, m.State)
		}
	}
	return checkRepeats("models", len(h.Models), func(i int) []byte { return h.Models[i].ModelID })
}

// Check validates an announcement's structure, including its region.
func (a *Announcement) Check() error {
	if len(a.MachineID) != hashLen {
		return fmt.Errorf("%w: machine_id must be %d bytes", errInvalid, hashLen)
	}
	if err := CheckRegion(a.Region); err != nil {
		return err
	}
	if err := checkText("hardware_class", a.HardwareClass, maxHWClassLen); err != nil {
		return err
	}
	if a.Capacity > maxCapacityValue {
		return fmt.Errorf("%w: capacity out of range", errInvalid)
	}
	if (len(a.Models) == 0 && len(a.Experts) == 0) || len(a.Models) > maxModels {
		return fmt.Errorf("%w: %d models (want 1..%d, or 0 with experts)", errInvalid, len(a.Models), maxModels)
	}
	if err := checkExpertOffers(a.Experts); err != nil {
		return err
	}
	if a.Standby != nil && len(a.Standby.HPKEKey) != StandbyKeySize {
		return fmt.Errorf("%w: standby.hpke_key must be %d bytes", errInvalid, StandbyKeySize)
	}
	for i := range a.Models {
		if err := a.Models[i].check(); err != nil {
			return fmt.Errorf("models[%d]: %w", i, err)
		}
	}
	return checkRepeats("models", len(a.Models), func(i int) []byte { return a.Models[i].ModelID })
}

// checkRepeats refuses a list of n entries (named list) in which an entry
// names the model (id(i)) of an earlier one: an offer or a status is
// given once per model.
func checkRepeats(list string, n int, id func(i int) []byte) error {
	seen := make(map[string]bool, n)
	for i := range n {
		if seen[string(id(i))] {
			return fmt.Errorf("%w: %s[%d] repeats a model", errInvalid, list, i)
		}
		seen[string(id(i))] = true
	}
	return nil
}

func (m *ModelOffer) check() error {
	if len(m.ModelID) != hashLen {
		return fmt.Errorf("%w: model_id must be %d bytes", errInvalid, hashLen)
	}
	if len(m.WeightsHash) != hashLen {
		return fmt.Errorf("%w: weights_hash must be %d bytes", errInvalid, hashLen)
	}
	if err := checkText("name", m.Name, maxNameLen); err != nil {
		return err
	}
	if err := checkText("engine", m.Engine, maxEngineLen); err != nil {
		return err
	}
	if len(m.Verification) == 0 || len(m.Verification) > maxVerifyLevels {
		return fmt.Errorf("%w: verification must list 1..%d levels", errInvalid, maxVerifyLevels)
	}
	if err := m.MoE.check(); err != nil {
		return err
	}
	if err := m.checkFeatures(); err != nil {
		return err
	}
	seen := map[terms.Verification]bool{}
	for _, v := range m.Verification {
		if !v.Valid() {
			return fmt.Errorf("%w: unknown verification level %q", errInvalid, v)
		}
		if seen[v] {
			return fmt.Errorf("%w: verification level %q repeated", errInvalid, v)
		}
		seen[v] = true
	}
	return nil
}

func checkText(field, s string, max int) error {
	if s == "" || len(s) > max {
		return fmt.Errorf("%w: %s must be 1..%d bytes", errInvalid, field, max)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: %s has a non-printable character", errInvalid, field)
		}
	}
	return nil
}

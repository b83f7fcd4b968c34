package receipt

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const (
	// Domain is the envelope domain of every receipt.
	Domain = "tenzro/v1/receipt"
	// PayloadType is the envelope payload type of a version 1 receipt.
	PayloadType = "tenzro.receipt.v1"

	// NonceSize is the size of a request nonce.
	NonceSize = 16
	// HashSize is the size of model IDs, machine IDs and every hash field.
	HashSize = 32
	// MaxEngineLen bounds Receipt.Engine (as gossip bounds an offer's engine).
	MaxEngineLen = 64
	// MaxFinishReasonLen bounds Receipt.FinishReason.
	MaxFinishReasonLen = 32
	// MaxPeerIDLen bounds Receipt.ProviderPeer and PaymentRecord.ProviderPeer.
	MaxPeerIDLen = 128
	// MaxPayloadSize bounds an encoded receipt; a maximal one is under 650 bytes.
	MaxPayloadSize = 2 << 10
	// MaxEnvelopeSize bounds a receipt envelope.
	MaxEnvelopeSize = MaxPayloadSize + identity.EnvelopeOverhead
)

// Verification errors. Verify wraps exactly one of them.
var (
	// ErrMalformed: the envelope or the receipt inside it does not decode,
	// is not canonical, is too large, or has a field of the wrong size.
	ErrMalformed = errors.New("receipt: malformed")
	// ErrWrongDomain: the envelope is another kind of message (its domain or
	// payload type is not a receipt's).
	ErrWrongDomain = errors.New("receipt: not a receipt envelope")
	// ErrNotPinned: Verify was called without a pinned machine.
	ErrNotPinned = errors.New("receipt: no pinned machine to verify against")
	// ErrWrongMachine: the certificate belongs to another machine than the
	// pinned one (also wraps identity.ErrMachineMismatch).
	ErrWrongMachine = errors.New("receipt: signed by another machine than the pinned one")
	// ErrBadCertificate: the session certificate does not verify (malformed,
	// expired, not yet valid, bad signatures, ...; the identity sentinel is
	// wrapped too).
	ErrBadCertificate = errors.New("receipt: bad session certificate")
	// ErrBadSignature: the session key's signature does not cover the
	// envelope as received.
	ErrBadSignature = errors.New("receipt: bad signature")
	// ErrSignerMismatch: the receipt names a machine or peer other than the
	// one its certificate binds.
	ErrSignerMismatch = errors.New("receipt: receipt names another machine or peer than its signer")
)

// SamplingParams are the sampling parameters as a receipt records them:
// integers only, so the signed bytes never depend on float formatting.
type SamplingParams struct {
	TemperatureMilli uint32 `cbor:"1,keyasint" json:"temperature_milli"` // round(temperature × 1000)
	TopPMilli        uint32 `cbor:"2,keyasint" json:"top_p_milli"`       // round(top_p × 1000)
	TopK             uint32 `cbor:"3,keyasint" json:"top_k"`
	Seed             uint64 `cbor:"4,keyasint" json:"seed"`
	MaxTokens        uint32 `cbor:"5,keyasint" json:"max_tokens"`
}

// maxFixedPoint bounds temperature and top_p before conversion (1e6 is far
// beyond any meaningful value and keeps the millis in uint32).
const maxFixedPoint = 1e6

// NewSamplingParams converts an engine request's sampling parameters,
// rounding temperature and top_p to the nearest thousandth. It rejects NaN,
// infinite, negative or absurdly large values.
func NewSamplingParams(s terms.Sampling) (SamplingParams, error) {
	temp, err := milli("temperature", s.Temperature)
	if err != nil {
		return SamplingParams{}, err
	}
	topP, err := milli("top_p", s.TopP)
	if err != nil {
		return SamplingParams{}, err
	}
	if s.TopK < 0 || int64(s.TopK) > math.MaxUint32 {
		return SamplingParams{}, fmt.Errorf("receipt: sampling: top_k %d out of range", s.TopK)
	}
	if s.MaxTokens < 0 || int64(s.MaxTokens) > math.MaxUint32 {
		return SamplingParams{}, fmt.Errorf("receipt: sampling: max_tokens %d out of range", s.MaxTokens)
	}
	return SamplingParams{TemperatureMilli: temp, TopPMilli: topP, TopK: uint32(s.TopK),
		Seed: s.Seed, MaxTokens: uint32(s.MaxTokens)}, nil
}

func milli(name string, v float64) (uint32, error) {
	if math.IsNaN(v) || v < 0 || v > maxFixedPoint {
		return 0, fmt.Errorf("receipt: sampling: %s %v out of range [0, %g]", name, v, maxFixedPoint)
	}
	return uint32(math.Round(v * 1000)), nil
}

// Receipt is what a provider signs for one served request.
type Receipt struct {
	ModelID         []byte         `cbor:"1,keyasint" json:"model_id"`         // catalog model hash (32)
	Engine          string         `cbor:"2,keyasint" json:"engine"`           // engine name, 1..MaxEngineLen bytes
	MachineID       []byte         `cbor:"3,keyasint" json:"machine_id"`       // serving machine (32)
	ProviderPeer    []byte         `cbor:"4,keyasint" json:"provider_peer"`    // libp2p peer ID bytes
	Nonce           []byte         `cbor:"5,keyasint" json:"nonce"`            // request nonce (NonceSize)
	InputCommitment []byte         `cbor:"6,keyasint" json:"input_commitment"` // InputCommitment (32)
	OutputHash      []byte         `cbor:"7,keyasint" json:"output_hash"`      // OutputHash (32)
	Units           terms.Units    `cbor:"8,keyasint" json:"units"`            // units as the provider claims them
	Sampling        SamplingParams `cbor:"9,keyasint" json:"sampling"`
	CommitmentHash  []byte         `cbor:"10,keyasint" json:"commitment_hash"` // empty, or 32 bytes of logit commitments
	FinishReason    string         `cbor:"11,keyasint" json:"finish_reason"`
	TimeMs          int64          `cbor:"12,keyasint" json:"time_ms"` // unix ms when the answer was finished
	// ExpertsHash, for a MoE call whose experts ran at holders, is the
	// hash of the per-holder account the final frame carries
	// (p2p/infer.ExpertsHash): the provider signs the split its
	// Units.ExpertTokens total is made of. Omitted otherwise, so every
	// other receipt encodes as before.
	ExpertsHash []byte `cbor:"13,keyasint,omitempty" json:"experts_hash,omitempty"`
	// TokensHash, on an optimistic receipt, is TokensHash of the
	// generated token IDs the commitment proofs' steps are of: a dispute
	// re-executes exactly the tokens the provider signed, never a
	// disputer's tokenization of the text (which differs wherever a piece
	// is not valid UTF-8 on its own, or a stop string cut a token).
	// Omitted otherwise; a receipt signed before the field existed is
	// not disputable (the ledger refuses its evidence as malformed).
	TokensHash []byte `cbor:"14,keyasint,omitempty" json:"tokens_hash,omitempty"`
	// Payer and Settler, for a paid call, are the chain accounts of the
	// pay authorization the provider served under, and Price is the least
	// it is owed for the call (micro-units, before any gateway
	// surcharge): the chain settles only a record naming the same payer
	// and settler at no lower price, so nobody holding the receipt can
	// settle the call for less or from another escrow. All three are
	// omitted for an unpaid call, so such a receipt encodes as before.
	Payer   []byte `cbor:"15,keyasint,omitempty" json:"payer,omitempty"`
	Settler []byte `cbor:"16,keyasint,omitempty" json:"settler,omitempty"`
	Price   uint64 `cbor:"17,keyasint,omitempty" json:"price,omitempty"`
}

// AccountSize is the size of Receipt.Payer and Receipt.Settler (a chain
// account: an Ed25519 public key).
const AccountSize = 32

// Paid reports whether the receipt names the payer and settler it was
// served under.
func (r *Receipt) Paid() bool { return len(r.Payer) == AccountSize }

// Validate checks field sizes and encodings (not signatures or commitments).
func (r *Receipt) Validate() error {
	for _, f := range []struct {
		name string
		b    []byte
		n    int
	}{
		{"model_id", r.ModelID, HashSize}, {"machine_id", r.MachineID, HashSize},
		{"nonce", r.Nonce, NonceSize}, {"input_commitment", r.InputCommitment, HashSize},
		{"output_hash", r.OutputHash, HashSize},
	} {
		if len(f.b) != f.n {
			return fmt.Errorf("%w: %s is %d bytes, want %d", ErrMalformed, f.name, len(f.b), f.n)
		}
	}
	if n := len(r.CommitmentHash); n != 0 && n != HashSize {
		return fmt.Errorf("%w: commitment_hash is %d bytes, want 0 or %d", ErrMalformed, n, HashSize)
	}
	if n := len(r.ExpertsHash); n != 0 && n != HashSize {
		return fmt.Errorf("%w: experts_hash is %d bytes, want 0 or %d", ErrMalformed, n, HashSize)
	}
	if n := len(r.TokensHash); n != 0 && (n != HashSize || len(r.CommitmentHash) == 0) {
		return fmt.Errorf("%w: tokens_hash is %d bytes, want 0, or %d beside a commitment hash", ErrMalformed, n, HashSize)
	}
	if err := r.validatePay(); err != nil {
		return err
	}
	if r.Engine == "" || len(r.Engine) > MaxEngineLen || !utf8.ValidString(r.Engine) {
		return fmt.Errorf("%w: engine must be 1..%d bytes of UTF-8", ErrMalformed, MaxEngineLen)
	}
	if len(r.FinishReason) > MaxFinishReasonLen || !utf8.ValidString(r.FinishReason) {
		return fmt.Errorf("%w: finish_reason must be at most %d bytes of UTF-8", ErrMalformed, MaxFinishReasonLen)
	}
	if err := checkPeer(r.ProviderPeer); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if r.TimeMs < 0 {
		return fmt.Errorf("%w: negative time_ms", ErrMalformed)
	}
	return nil
}

// validatePay: payer and settler are both AccountSize bytes or both
// absent, and an unpaid receipt bills no price.
func (r *Receipt) validatePay() error {
	switch {
	case len(r.Payer) == 0 && len(r.Settler) == 0:
		if r.Price != 0 {
			return fmt.Errorf("%w: price %d without a payer and settler", ErrMalformed, r.Price)
		}
	case len(r.Payer) != AccountSize || len(r.Settler) != AccountSize:
		return fmt.Errorf("%w: payer is %d bytes and settler %d, want both %d or both absent", ErrMalformed, len(r.Payer), len(r.Settler), AccountSize)
	}
	return nil
}

func checkPeer(b []byte) error {
	if len(b) == 0 || len(b) > MaxPeerIDLen {
		return fmt.Errorf("provider_peer is %d bytes, want 1..%d", len(b), MaxPeerIDLen)
	}
	if _, err := peer.IDFromBytes(b); err != nil {
		return fmt.Errorf("provider_peer: %w", err)
	}
	return nil
}

// Marshal validates the receipt and returns its deterministic CBOR.
func (r *Receipt) Marshal() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := cborx.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("receipt: encode: %w", err)
	}
	return b, nil
}

// UnmarshalReceipt decodes and validates a receipt payload, accepting only
// its canonical encoding of at most MaxPayloadSize bytes.
func UnmarshalReceipt(b []byte) (*Receipt, error) {
	return cborx.UnmarshalChecked(b, MaxPayloadSize, ErrMalformed, (*Receipt).Validate)
}

// Parse decodes a receipt envelope and its payload without verifying
// anything but their encodings, for display. Use Verify before trusting it.
func Parse(envelope []byte) (*identity.Envelope, *Receipt, error) {
	env, err := identity.UnmarshalEnvelope(envelope, MaxEnvelopeSize)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if env.Domain != Domain || env.PayloadType != PayloadType {
		return nil, nil, fmt.Errorf("%w: domain %q, payload type %q", ErrWrongDomain, env.Domain, env.PayloadType)
	}
	r, err := UnmarshalReceipt(env.Payload)
	if err != nil {
		return nil, nil, err
	}
	return env, r, nil
}

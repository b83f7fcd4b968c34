package infer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// MaxExpertHolders bounds the expert entries of one final frame: a call
// of a MoE model whose experts run at holders names each holder once.
const MaxExpertHolders = 256

// RecordSize is the size of ExpertUse.Record.
const RecordSize = 32

// ExpertUse is one expert holder's part in a call whose MoE experts ran
// at other machines, as the serving provider reports it in the final
// frame and the buyer sees it (`tenzro.experts`).
//
// The receipt signs the total (its Units.ExpertTokens, which the
// ExpertTokens of all entries sum to) and the entries themselves (its
// ExpertsHash, of ExpertsHash): the split per holder is the serving
// provider's signed statement. What backs Paid is the payment record the
// provider signed to the holder, whose request digest Record names: the
// holder collects it on chain, where anyone can look it up.
type ExpertUse struct {
	Holder       []byte `cbor:"1,keyasint"`           // the holder's peer ID bytes
	Machine      []byte `cbor:"2,keyasint"`           // its registered machine (MachineIDSize)
	Batches      uint64 `cbor:"3,keyasint,omitempty"` // verified exchanges (one per layer per forward pass)
	ExpertTokens uint64 `cbor:"4,keyasint,omitempty"` // rows it computed and the provider verified
	Price        uint64 `cbor:"5,keyasint,omitempty"` // its price per expert-token, micro-units
	// Paid is the amount signed to the holder for this call: ExpertTokens
	// × Price, or 0, with Unpaid saying why.
	Paid   uint64 `cbor:"6,keyasint,omitempty"`
	Unpaid string `cbor:"7,keyasint,omitempty"`
	// Record is the request digest of the signed payment record (RecordSize
	// bytes), set exactly when Paid is.
	Record []byte `cbor:"8,keyasint,omitempty"`
}

// Reasons of an unpaid holder (ExpertUse.Unpaid) a provider reports.
const (
	UnpaidOffChain = "off_chain"   // the serving provider runs without a chain: nothing is signed
	UnpaidFree     = "free"        // the holder's price is 0
	UnpaidNoWork   = "no_work"     // no verified rows: every exchange with it was retired
	UnpaidFailed   = "sign_failed" // signing the record failed; the provider logged it
)

// ExpertsDomain prefixes the bytes ExpertsHash covers.
const ExpertsDomain = "tenzro/v1/experts"

// ExpertsHash is SHA-256 over ExpertsDomain and the deterministic CBOR of
// a final frame's expert entries: what the receipt's ExpertsHash signs.
func ExpertsHash(es []ExpertUse) ([32]byte, error) {
	b, err := cborx.Marshal(es)
	if err != nil {
		return [32]byte{}, fmt.Errorf("infer: experts hash: %w", err)
	}
	return sha256.Sum256(append([]byte(ExpertsDomain), b...)), nil
}

// ExpertTokensOf sums the entries' expert-tokens; ok is false on overflow.
func ExpertTokensOf(es []ExpertUse) (n uint64, ok bool) {
	for _, e := range es {
		var carry uint64
		if n, carry = bits.Add64(n, e.ExpertTokens, 0); carry != 0 {
			return 0, false
		}
	}
	return n, true
}

// checkExperts: bounded, each holder a peer ID named once with a machine,
// Paid either 0 with a reason or exactly ExpertTokens × Price with its
// record, and a total that fits 64 bits.
func checkExperts(es []ExpertUse) error {
	if len(es) > MaxExpertHolders {
		return fmt.Errorf("%w: %d expert holders, limit %d", ErrMalformedFrame, len(es), MaxExpertHolders)
	}
	seen := make(map[string]bool, len(es))
	for i, e := range es {
		if _, err := peer.IDFromBytes(e.Holder); err != nil {
			return fmt.Errorf("%w: experts[%d].holder: %w", ErrMalformedFrame, i, err)
		}
		if seen[string(e.Holder)] {
			return fmt.Errorf("%w: experts[%d] repeats a holder", ErrMalformedFrame, i)
		}
		seen[string(e.Holder)] = true
		if len(e.Machine) != MachineIDSize {
			return fmt.Errorf("%w: experts[%d].machine is %d bytes, want %d", ErrMalformedFrame, i, len(e.Machine), MachineIDSize)
		}
		if len(e.Unpaid) > maxCodeLen || !utf8.ValidString(e.Unpaid) {
			return fmt.Errorf("%w: experts[%d].unpaid: longer than %d bytes or not UTF-8", ErrMalformedFrame, i, maxCodeLen)
		}
		if e.Paid == 0 {
			if e.Unpaid == "" || len(e.Record) != 0 {
				return fmt.Errorf("%w: experts[%d]: unpaid needs a reason and no record", ErrMalformedFrame, i)
			}
			continue
		}
		hi, want := bits.Mul64(e.ExpertTokens, e.Price)
		if hi != 0 || e.Paid != want {
			return fmt.Errorf("%w: experts[%d]: paid %d is not %d expert-tokens × %d", ErrMalformedFrame, i, e.Paid, e.ExpertTokens, e.Price)
		}
		if e.Unpaid != "" || len(e.Record) != RecordSize {
			return fmt.Errorf("%w: experts[%d]: paid needs its %d-byte record and no reason", ErrMalformedFrame, i, RecordSize)
		}
	}
	if _, ok := ExpertTokensOf(es); !ok {
		return fmt.Errorf("%w: expert-tokens overflow", ErrMalformedFrame)
	}
	return nil
}

// expertJSON is ExpertUse as the OpenAI routes show it.
type expertJSON struct {
	Holder       string `json:"holder"`
	Machine      string `json:"machine"`
	Batches      uint64 `json:"batches"`
	ExpertTokens uint64 `json:"expert_tokens"`
	Price        uint64 `json:"price"`
	Paid         uint64 `json:"paid"`
	Reason       string `json:"reason,omitempty"` // why paid is 0
	Record       string `json:"record,omitempty"` // hex request digest of the payment record
}

// MarshalJSON renders the holder as its peer ID string and the machine
// and record in hex.
func (e ExpertUse) MarshalJSON() ([]byte, error) {
	j := expertJSON{Machine: hex.EncodeToString(e.Machine), Batches: e.Batches, ExpertTokens: e.ExpertTokens,
		Price: e.Price, Paid: e.Paid, Reason: e.Unpaid, Record: hex.EncodeToString(e.Record)}
	if id, err := peer.IDFromBytes(e.Holder); err == nil {
		j.Holder = id.String()
	}
	return json.Marshal(j)
}

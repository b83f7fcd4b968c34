package commit

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Chunking constants.
const (
	StepsPerChunk = 32
	TopK          = 4
	MaxPairs      = StepsPerChunk * TopK
	// ChunkBytes is the size of the proof of a full chunk.
	ChunkBytes = 2 + 2*MaxPairs
	// minModulus bounds the injective-modulus search from below.
	minModulus = 1 << 15
)

// Proof is the commitment to one chunk of decode steps.
type Proof struct {
	Modulus uint16
	Coeffs  []uint16 // one per committed pair, lowest degree first
}

// Steps is the number of decode steps the proof covers.
func (p Proof) Steps() int { return len(p.Coeffs) / TopK }

// Key is the index of the pair (step within its chunk, token).
func Key(step, token, vocab int) uint64 { return uint64(step)*uint64(vocab) + uint64(token) }

// Value encodes a log-prob as the half-precision bits of −logprob.
func Value(logprob float32) uint16 {
	v := -logprob
	if !(v >= 0) { // also NaN
		v = 0
	}
	return min(gguf.F32ToF16(v), 0x7bff)
}

// Build commits to the top-k log-probs of every decode step (each step must
// list TopK entries, as Generate returns them with LogProbs = TopK), one
// proof per StepsPerChunk steps.
func Build(steps [][]inference.LogProb, vocab int) ([]Proof, error) {
	if vocab < TopK {
		return nil, fmt.Errorf("commit: vocabulary of %d tokens is smaller than top-%d", vocab, TopK)
	}
	var proofs []Proof
	for c := 0; c < len(steps); c += StepsPerChunk {
		chunk := steps[c:min(c+StepsPerChunk, len(steps))]
		var keys []uint64
		var ys []uint32
		for s, top := range chunk {
			if len(top) != TopK {
				return nil, fmt.Errorf("commit: step %d has %d log-probs, want %d", c+s, len(top), TopK)
			}
			for _, lp := range top {
				if lp.ID < 0 || lp.ID >= vocab {
					return nil, fmt.Errorf("commit: step %d: token %d outside the vocabulary of %d", c+s, lp.ID, vocab)
				}
				if math.IsNaN(float64(lp.LogProb)) {
					return nil, fmt.Errorf("commit: step %d: log-prob is NaN", c+s)
				}
				keys = append(keys, Key(s, lp.ID, vocab))
				ys = append(ys, uint32(Value(lp.LogProb)))
			}
		}
		m, err := injectiveModulus(keys)
		if err != nil {
			return nil, fmt.Errorf("commit: chunk %d: %w", c/StepsPerChunk, err)
		}
		xs := make([]uint32, len(keys))
		for i, k := range keys {
			xs[i] = uint32(k % uint64(m))
		}
		coef := interpolate(xs, ys)
		p := Proof{Modulus: uint16(m), Coeffs: make([]uint16, len(coef))}
		for i, v := range coef {
			p.Coeffs[i] = uint16(v)
		}
		proofs = append(proofs, p)
	}
	return proofs, nil
}

// injectiveModulus returns the largest m in [2^15, Prime] under which the
// keys stay distinct.
func injectiveModulus(keys []uint64) (uint32, error) {
	seen := make(map[uint64]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return 0, errors.New("duplicate token in a step's top-k")
		}
		seen[k] = true
	}
	for m := uint64(Prime); m >= minModulus; m-- {
		clear(seen)
		ok := true
		for _, k := range keys {
			if seen[k%m] {
				ok = false
				break
			}
			seen[k%m] = true
		}
		if ok {
			return uint32(m), nil
		}
	}
	return 0, errors.New("no injective modulus")
}

// MarshalBinary encodes the proof: modulus then coefficients, big-endian.
func (p Proof) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 2+2*len(p.Coeffs))
	b = binary.BigEndian.AppendUint16(b, p.Modulus)
	for _, c := range p.Coeffs {
		b = binary.BigEndian.AppendUint16(b, c)
	}
	return b, nil
}

// DecodeProof parses one chunk proof, checking its shape and ranges.
func DecodeProof(b []byte) (Proof, error) {
	if len(b) < 2+2*TopK || len(b) > ChunkBytes || (len(b)-2)%(2*TopK) != 0 {
		return Proof{}, fmt.Errorf("commit: a proof is 2+%d·n bytes for 1..%d steps, got %d bytes", 2*TopK, StepsPerChunk, len(b))
	}
	p := Proof{Modulus: binary.BigEndian.Uint16(b), Coeffs: make([]uint16, (len(b)-2)/2)}
	if p.Modulus < minModulus || p.Modulus > Prime {
		return Proof{}, fmt.Errorf("commit: modulus %d outside %d..%d", p.Modulus, minModulus, Prime)
	}
	for i := range p.Coeffs {
		c := binary.BigEndian.Uint16(b[2+2*i:])
		if c >= Prime {
			return Proof{}, fmt.Errorf("commit: coefficient %d = %d is not a field element", i, c)
		}
		p.Coeffs[i] = c
	}
	return p, nil
}

// Encode serialises proofs: a u32 count, then each proof prefixed by its
// u16 byte length.
func Encode(proofs []Proof) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(proofs)))
	for _, p := range proofs {
		pb, _ := p.MarshalBinary()
		b = binary.BigEndian.AppendUint16(b, uint16(len(pb)))
		b = append(b, pb...)
	}
	return b
}

// MaxChunks bounds the proofs Decode accepts (a 1M-token generation).
const MaxChunks = 1 << 15

// Decode parses the output of Encode. Every proof but the last must cover
// a full chunk.
func Decode(b []byte) ([]Proof, error) {
	if len(b) < 4 {
		return nil, errors.New("commit: proof set shorter than its count")
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if n > MaxChunks || uint64(n)*(2+2+2*TopK) > uint64(len(b)) {
		return nil, fmt.Errorf("commit: %d proofs cannot fit in %d bytes", n, len(b))
	}
	proofs := make([]Proof, 0, n)
	for i := uint32(0); i < n; i++ {
		if len(b) < 2 {
			return nil, fmt.Errorf("commit: proof %d: truncated", i)
		}
		l := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+l {
			return nil, fmt.Errorf("commit: proof %d: %d bytes declared, %d left", i, l, len(b)-2)
		}
		p, err := DecodeProof(b[2 : 2+l])
		if err != nil {
			return nil, fmt.Errorf("commit: proof %d: %w", i, err)
		}
		if i+1 < n && p.Steps() != StepsPerChunk {
			return nil, fmt.Errorf("commit: proof %d covers %d steps but is not the last", i, p.Steps())
		}
		proofs = append(proofs, p)
		b = b[2+l:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("commit: %d trailing bytes", len(b))
	}
	return proofs, nil
}

// Hash is the commitment hash over all chunk proofs of a generation.
func Hash(proofs []Proof) [32]byte {
	h := sha256.New()
	h.Write([]byte("tenzro/logit-commitment/v1\x00"))
	h.Write(Encode(proofs))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

package commit

import (
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
)

// Builder commits to a generation while it streams: feed it each token's
// TopK as it is emitted; every StepsPerChunk steps it returns the finished
// chunk proof, and Finish returns all proofs including a final partial one.
type Builder struct {
	vocab  int
	steps  [][]inference.LogProb
	proofs []Proof
}

// NewBuilder starts a commitment for a model with the given vocabulary size.
func NewBuilder(vocab int) *Builder { return &Builder{vocab: vocab} }

// Add records one decode step; it returns the chunk's proof when the step
// completes a chunk, else nil.
func (b *Builder) Add(top []inference.LogProb) (*Proof, error) {
	if len(top) != TopK {
		return nil, fmt.Errorf("commit: step %d has %d log-probs, want %d", len(b.proofs)*StepsPerChunk+len(b.steps), len(top), TopK)
	}
	b.steps = append(b.steps, append([]inference.LogProb(nil), top...))
	if len(b.steps) < StepsPerChunk {
		return nil, nil
	}
	return b.flush()
}

func (b *Builder) flush() (*Proof, error) {
	ps, err := Build(b.steps, b.vocab)
	if err != nil {
		return nil, err
	}
	b.steps = b.steps[:0]
	b.proofs = append(b.proofs, ps[0])
	return &b.proofs[len(b.proofs)-1], nil
}

// Finish closes the commitment and returns every chunk proof.
func (b *Builder) Finish() ([]Proof, error) {
	if len(b.steps) > 0 {
		if _, err := b.flush(); err != nil {
			return nil, err
		}
	}
	return b.proofs, nil
}

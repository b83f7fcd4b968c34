package receipt

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Mismatches Check reports, each wrapped in its own error.
var (
	ErrNonceMismatch     = errors.New("receipt: nonce differs from the request's")
	ErrInputMismatch     = errors.New("receipt: input commitment differs from what the gateway sent")
	ErrOutputMismatch    = errors.New("receipt: output hash differs from the text the gateway received")
	ErrModelMismatch     = errors.New("receipt: model differs from the one requested")
	ErrMachineMismatch   = errors.New("receipt: machine differs from the one the request was routed to")
	ErrMaxTokensMismatch = errors.New("receipt: max_tokens differs from the request's")
)

// Observed is what the gateway itself saw of one request.
type Observed struct {
	Nonce           []byte
	ModelID         []byte
	MachineID       identity.MachineID // the machine the request was routed to
	InputCommitment [32]byte           // InputCommitment over what the gateway sent
	OutputText      string             // the exact text received
	// BytesSent is every byte the gateway wrote to the provider for this
	// request (request frame included); BytesReceived every byte it read
	// back (response frames included). Negative values count as 0.
	BytesSent, BytesReceived int64
	// MaxTokens is the request's max_tokens; 0 means none was set.
	MaxTokens int
	// ExactOutputTokens and ExactInputTokens are the gateway's own tokenizer
	// counts (the input count covers the whole prompt, cached or not), or
	// -1 when the gateway does not hold the model's tokenizer.
	ExactOutputTokens, ExactInputTokens int
}

// Check compares a verified receipt with what the gateway saw: nonce, input
// commitment, output hash, model ID, machine ID and max_tokens. It returns
// nil or every mismatch joined, each wrapping its own sentinel.
func Check(r *Receipt, o Observed) error {
	if r == nil {
		return errors.New("receipt: check: nil receipt")
	}
	var errs []error
	mismatch := func(sentinel error, got, want []byte) {
		if !bytes.Equal(got, want) {
			errs = append(errs, fmt.Errorf("receipt: check: %w: receipt %x, observed %x", sentinel, got, want))
		}
	}
	out := OutputHash(o.OutputText)
	mismatch(ErrNonceMismatch, r.Nonce, o.Nonce)
	mismatch(ErrInputMismatch, r.InputCommitment, o.InputCommitment[:])
	mismatch(ErrOutputMismatch, r.OutputHash, out[:])
	mismatch(ErrModelMismatch, r.ModelID, o.ModelID)
	mismatch(ErrMachineMismatch, r.MachineID, o.MachineID[:])
	if int64(r.Sampling.MaxTokens) != int64(o.MaxTokens) {
		errs = append(errs, fmt.Errorf("receipt: check: %w: receipt %d, request %d", ErrMaxTokensMismatch, r.Sampling.MaxTokens, o.MaxTokens))
	}
	return errors.Join(errs...)
}

package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tenzrod/tenzrod/inference"
)

// probeTimeout bounds one continuation probe: a one-token generation.
const probeTimeout = 10 * time.Second

// ProbeContinuation finds, with one-token requests, the most the engine
// honours of the continuation mode want: an assistant prefix (a chat
// request ending in an assistant message to continue), else a raw prompt
// (a text completion of prompt + text), else none. Each step down is taken
// only on a refusal of the request's form (400, 404, 405, 422, 501), so a
// busy or broken engine never downgrades a provider for good: such an
// answer returns want with the error, and the caller probes again later.
func (c *Client) ProbeContinuation(ctx context.Context, want string) (string, error) {
	steps := []string{ContinueAssistantPrefix, ContinueRawPrompt}
	switch want {
	case ContinueNone:
		return ContinueNone, nil
	case ContinueRawPrompt:
		steps = steps[1:]
	case ContinueAssistantPrefix:
	default:
		return want, fmt.Errorf("upstream: continuation %q is not a mode", want)
	}
	for _, mode := range steps {
		err := c.probe(ctx, mode)
		if err == nil {
			return mode, nil
		}
		if !refusedForm(err) {
			return want, fmt.Errorf("upstream: continuation probe (%s) inconclusive: %w", mode, err)
		}
	}
	return ContinueNone, nil
}

func (c *Client) probe(ctx context.Context, mode string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	r := &Request{Sampling: inference.Sampling{MaxTokens: 1}}
	if mode == ContinueAssistantPrefix {
		r.Chat = true
		r.Messages = []inference.Message{{Role: "user", Content: "Say hello."}}
		r.Continuation = "Hello"
	} else {
		r.Prompt, r.Continuation = "Say hello.", " Hello"
	}
	_, err := c.Complete(ctx, r, func(Delta) error { return nil })
	if errors.Is(err, ErrEmptyAnswer) {
		// It took the form and chose to say nothing more.
		return nil
	}
	return err
}

// refusedForm reports whether err is the engine refusing what was asked
// rather than failing to answer.
func refusedForm(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusUnprocessableEntity, http.StatusNotImplemented:
		return true
	}
	return false
}

package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/inference/upstream"
	"github.com/tenzrod/tenzrod/p2p/infer"
)

// endingCtx is a context that is live on its first Err read and canceled
// on every later one: the buyer leaving exactly between two reads, which
// a real context hits only by chance.
type endingCtx struct {
	context.Context
	reads int
}

func (c *endingCtx) Err() error {
	c.reads++
	if c.reads == 1 {
		return nil
	}
	return context.Canceled
}

// TestRelayFailureContextEndsBetweenChecks: an upstream failure whose
// context ends right after the first check is answered with the upstream's
// status. Reading the context twice found neither a context error nor an
// *openai.Error and dereferenced nil.
func TestRelayFailureContextEndsBetweenChecks(t *testing.T) {
	cases := []struct {
		err    error
		status int
	}{
		{fmt.Errorf("dial: %w", upstream.ErrUnreachable), http.StatusBadGateway},
		{&upstream.StatusError{Status: http.StatusTooManyRequests, Code: "busy", Message: "slow down"}, http.StatusTooManyRequests},
		{errors.New("reset"), http.StatusBadGateway},
	}
	for _, c := range cases {
		ctx := &endingCtx{Context: context.Background()}
		err := relayFailure(ctx, &infer.Request{}, c.err)
		var ef *infer.ErrorFrame
		if !errors.As(err, &ef) {
			t.Fatalf("%v: got %v, want an error frame", c.err, err)
		}
		if ef.Status != c.status {
			t.Fatalf("%v: status %d, want %d", c.err, ef.Status, c.status)
		}
		if ctx.reads != 1 {
			t.Fatalf("%v: the context was read %d times, want once", c.err, ctx.reads)
		}
	}
	// A context already ended is the answer itself.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := relayFailure(ctx, &infer.Request{}, upstream.ErrUnreachable); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: got %v, want context.Canceled", err)
	}
}

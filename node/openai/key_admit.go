package openai

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// WithKeys makes b also know the run-time keys ks holds (nil: none).
func (b *Buyers) WithKeys(ks *buyerkeys.Store) *Buyers {
	b.keys = ks
	return b
}

// keyAccount is the payer of the run-time key with token hash h; a
// revoked key is no key.
func (b *Buyers) keyAccount(h string) (string, bool) {
	if b.keys == nil {
		return "", false
	}
	k, ok := b.keys.Lookup(h)
	if !ok || k.Revoked {
		return "", false
	}
	return k.Payer, true
}

// keyCall is an admitted call of a run-time key (the zero value: a call
// of a config buyer, which no key limits).
type keyCall struct {
	call *buyerkeys.Call
	key  *buyerkeys.Key
}

func (kc keyCall) done() {
	if kc.call != nil {
		kc.call.Done()
	}
}

// defaults is the request's provider preferences, or, when it gives
// none, the key's default preferences (OpenRouter's provider object,
// parsed as a request's would be).
func (kc keyCall) defaults(pr *prefs.Preferences) (*prefs.Preferences, *Error) {
	if pr != nil || kc.key == nil || len(kc.key.Preferences) == 0 {
		return pr, nil
	}
	d, err := prefs.Parse(kc.key.Preferences, false)
	if err != nil {
		// Checked when the key was made; a stored one that no longer
		// parses is the operator's to fix, not the buyer's.
		return nil, &Error{Status: http.StatusInternalServerError, Type: "server_error", Code: "key_preferences",
			Message: "this key's default provider preferences do not parse: " + err.Error()}
	}
	return d, nil
}

// limit narrows the request to what the key allows: providers quoting
// more than its max_per_request are left out, so the worst case reserved
// is within it.
func (kc keyCall) limit(gr *gateway.Request) {
	if kc.key == nil {
		return
	}
	// Fallback models the key may not call are left out, as the first
	// model was checked at admission.
	gr.Models = slices.DeleteFunc(gr.Models, func(m string) bool { return !kc.key.Allows(m) })
	if kc.key.MaxPerRequest == 0 {
		return
	}
	if gr.MaxPrice == nil || *gr.MaxPrice > kc.key.MaxPerRequest {
		capped := kc.key.MaxPerRequest
		gr.MaxPrice = &capped
	}
}

// admitKey admits a call of the request's run-time key, if its token is
// one, before anything is routed: refused while the key is revoked, over
// its period's budget (402 budget_exceeded, naming the budget and the
// reset), at its concurrency or rate (429), or for a model it is not
// allowed (403). The returned context carries the call, through which the
// gateway reserves the worst case and counts the bill.
func (b *Buyers) admitKey(ctx context.Context, h http.Header, model string) (context.Context, keyCall, error) {
	tok, ok := bearer(h)
	if b.keys == nil || !ok {
		return ctx, keyCall{}, nil
	}
	c, k, ok, err := b.keys.Admit(TokenHash(tok))
	switch {
	case !ok:
		return ctx, keyCall{}, nil
	case err != nil:
		return ctx, keyCall{}, openaiError(gateway.KeyRefusal(err))
	case !k.Allows(model):
		c.Done()
		return ctx, keyCall{}, &Error{Status: http.StatusForbidden, Type: "invalid_request_error", Code: "model_not_allowed", Param: "model",
			Message: "this key may not call " + model + "; it is allowed: " + strings.Join(k.Models, ", ")}
	}
	return buyerkeys.WithCall(ctx, c), keyCall{call: c, key: k}, nil
}

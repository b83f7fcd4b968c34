package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// Options are a request's tenzro routing options, from the body's `tenzro`
// object or X-Tenzro-* headers (the body wins where both are given).
type Options struct {
	Strategy     string             `json:"strategy,omitempty"`     // price | latency | standing | random | weighted
	Verification terms.Verification `json:"verification,omitempty"` // none | receipt | optimistic | tee
	Hedge        *bool              `json:"hedge,omitempty"`        // false opts out of hedging
	Provider     string             `json:"provider,omitempty"`     // pin: peer ID
	Region       string             `json:"region,omitempty"`       // pin: country code or continent
	// AllowUnregistered opts in to providers the chain does not know.
	AllowUnregistered bool `json:"allow_unregistered,omitempty"`
	// Session makes the request a turn of a session (see SessionOptions).
	Session *SessionOptions `json:"session,omitempty"`
	// Preferences are OpenRouter's provider preferences, the same fields
	// as the top-level `provider` object; max_price is also the bare
	// number (the whole request's cap) it always was here.
	prefs.Preferences
}

var (
	strategies = map[string]bool{"": true, "price": true, "latency": true, "standing": true, "random": true, "weighted": true}
)

// ParseOptions reads and checks the routing options of a request.
func ParseOptions(raw json.RawMessage, h http.Header) (Options, *Error) {
	var o Options
	if v := h.Get("X-Tenzro-Strategy"); v != "" {
		o.Strategy = v
	}
	if v := h.Get("X-Tenzro-Verification"); v != "" {
		o.Verification = terms.Verification(v)
	}
	if v := h.Get("X-Tenzro-Hedge"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, BadRequest("X-Tenzro-Hedge", "X-Tenzro-Hedge must be true or false")
		}
		o.Hedge = &b
	}
	if v := h.Get("X-Tenzro-Max-Price"); v != "" {
		p, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return o, BadRequest("X-Tenzro-Max-Price", "X-Tenzro-Max-Price must be an integer number of micro-units")
		}
		o.MaxPrice = &prefs.MaxPrice{Total: &p}
	}
	if v := h.Get("X-Tenzro-Provider"); v != "" {
		o.Provider = v
	}
	if v := h.Get("X-Tenzro-Region"); v != "" {
		o.Region = v
	}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, errContinuity) {
				return o, BadRequest("tenzro.session.continuity", "tenzro.session: %v", err)
			}
			return o, BadRequest("tenzro", "tenzro options: %v", err)
		}
	}
	o.Strategy = strings.ToLower(o.Strategy)
	if !strategies[o.Strategy] {
		return o, BadRequest("tenzro.strategy", "unknown strategy %q (price, latency, standing, random, weighted)", o.Strategy)
	}
	level, err := terms.ParseVerification(string(o.Verification))
	if err != nil {
		return o, BadRequest("tenzro.verification", "unknown verification level %q (%s)", o.Verification, terms.LevelNames())
	}
	o.Verification = level
	if err := o.Preferences.Check(true); err != nil {
		return o, BadRequest("tenzro", "tenzro options: %v", err)
	}
	if e := parseSession(&o, h); e != nil {
		return o, e
	}
	return o, nil
}

// NeedsCommitments reports whether the level asks for logit commitments.
func (o Options) NeedsCommitments() bool { return o.Verification.NeedsCommitments() }

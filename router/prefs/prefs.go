package prefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Preferences are a request's provider preferences. The zero value
// constrains nothing.
type Preferences struct {
	// Order lists providers (peer IDs, machine IDs or operator accounts)
	// tried first, in this order, before the strategy's ranking.
	Order []string `json:"order,omitempty"`
	// Only restricts the request to these providers; Ignore never uses
	// these.
	Only   []string `json:"only,omitempty"`
	Ignore []string `json:"ignore,omitempty"`
	// AllowFallbacks false keeps the request to the ordered (or only)
	// set, or to the first ranked provider when neither is given.
	AllowFallbacks *bool `json:"allow_fallbacks,omitempty"`
	// RequireParameters admits only providers announcing every request
	// parameter the request uses.
	RequireParameters bool `json:"require_parameters,omitempty"`
	// DataCollection "deny" (or ZDR) admits only providers announcing
	// that they retain no prompts.
	DataCollection string `json:"data_collection,omitempty"`
	ZDR            bool   `json:"zdr,omitempty"`
	// Quantizations admits only offers of these quantizations (OpenRouter's
	// names, e.g. "int8", "fp16", or GGUF file types, e.g. "q8_0").
	Quantizations []string `json:"quantizations,omitempty"`
	// Sort ranks by "price", "throughput" or "latency" instead of the
	// strategy.
	Sort     Sort      `json:"sort,omitempty"`
	MaxPrice *MaxPrice `json:"max_price,omitempty"`
	// PreferredMinThroughput (output tokens/s) and PreferredMaxLatency
	// (seconds to first token) move providers the router measured worse
	// to the back; they exclude nobody.
	PreferredMinThroughput *Cutoff `json:"preferred_min_throughput,omitempty"`
	PreferredMaxLatency    *Cutoff `json:"preferred_max_latency,omitempty"`
}

// Limits on what a request may list: a preference is read per request,
// so its size is bounded like every other field.
const (
	maxList  = 64
	maxEntry = 128
)

// Values of DataCollection and Sort.
const (
	DataAllow      = "allow"
	DataDeny       = "deny"
	SortPrice      = "price"
	SortThroughput = "throughput"
	SortLatency    = "latency"
)

// ErrInvalid marks a preference that is malformed or out of range.
var ErrInvalid = errors.New("prefs: invalid provider preferences")

// Parse reads a `provider` object. strict refuses unknown fields (the
// `tenzro` object's rule); otherwise they are ignored, as OpenRouter
// ignores them. The result is checked (Check).
func Parse(raw []byte, strict bool) (*Preferences, error) {
	var p Preferences
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrInvalid)
	}
	if err := p.Check(strict); err != nil {
		return nil, err
	}
	return &p, nil
}

// Check validates the preferences and normalises names to lower case.
// strict refuses the unknown price dimensions a lax parse ignored.
func (p *Preferences) Check(strict bool) error {
	for _, l := range []struct {
		name string
		v    []string
	}{{"order", p.Order}, {"only", p.Only}, {"ignore", p.Ignore}, {"quantizations", p.Quantizations}} {
		if len(l.v) > maxList {
			return fmt.Errorf("%w: %s lists %d entries (max %d)", ErrInvalid, l.name, len(l.v), maxList)
		}
		for _, e := range l.v {
			if e == "" || len(e) > maxEntry {
				return fmt.Errorf("%w: %s entries must be 1..%d bytes", ErrInvalid, l.name, maxEntry)
			}
		}
	}
	// An empty list constrains as little as none: one form for both.
	for _, l := range []*[]string{&p.Order, &p.Only, &p.Ignore, &p.Quantizations} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	for i, q := range p.Quantizations {
		p.Quantizations[i] = strings.ToLower(q)
	}
	p.DataCollection = strings.ToLower(p.DataCollection)
	if p.DataCollection != "" && p.DataCollection != DataAllow && p.DataCollection != DataDeny {
		return fmt.Errorf("%w: data_collection must be %q or %q, got %q", ErrInvalid, DataAllow, DataDeny, p.DataCollection)
	}
	p.Sort = Sort(strings.ToLower(string(p.Sort)))
	switch p.Sort {
	case "", SortPrice, SortThroughput, SortLatency:
	default:
		return fmt.Errorf("%w: sort must be price, throughput or latency, got %q", ErrInvalid, p.Sort)
	}
	if p.MaxPrice != nil && strict && len(p.MaxPrice.unknown) > 0 {
		return fmt.Errorf("%w: max_price: unknown field %q", ErrInvalid, p.MaxPrice.unknown[0])
	}
	for _, c := range []*Cutoff{p.PreferredMinThroughput, p.PreferredMaxLatency} {
		if err := c.check(); err != nil {
			return err
		}
	}
	return nil
}

// IsZero reports whether p constrains nothing.
func (p *Preferences) IsZero() bool {
	return p == nil || len(p.Order) == 0 && len(p.Only) == 0 && len(p.Ignore) == 0 && p.AllowFallbacks == nil &&
		!p.RequireParameters && p.DataCollection == "" && !p.ZDR && len(p.Quantizations) == 0 && p.Sort == "" &&
		p.MaxPrice == nil && p.PreferredMinThroughput == nil && p.PreferredMaxLatency == nil
}

// NoRetention reports whether only providers retaining no prompts may
// serve.
func (p *Preferences) NoRetention() bool {
	return p != nil && (p.DataCollection == DataDeny || p.ZDR)
}

// Fallbacks reports whether providers beyond the ordered or only set (or
// beyond the first ranked) may serve.
func (p *Preferences) Fallbacks() bool {
	return p == nil || p.AllowFallbacks == nil || *p.AllowFallbacks
}

package prefs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Sort is OpenRouter's `sort`: a string, or an object whose `by` names it.
type Sort string

// UnmarshalJSON accepts "price" or {"by": "price", ...}.
func (s *Sort) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = Sort(str)
		return nil
	}
	var obj struct {
		By string `json:"by"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("sort must be a string or an object with \"by\"")
	}
	*s = Sort(obj.By)
	return nil
}

// MaxPrice caps the price a provider may charge, per dimension, in
// micro-units: Prompt and Completion per million tokens, Request per call
// (the rate card's minimum), Total the whole request as quoted. A bare
// number (the `tenzro.max_price` of before) is Total.
type MaxPrice struct {
	Prompt     *uint64 `json:"prompt,omitempty"`
	Completion *uint64 `json:"completion,omitempty"`
	Request    *uint64 `json:"request,omitempty"`
	Total      *uint64 `json:"total,omitempty"`
	// unknown are dimensions this node does not price (OpenRouter's
	// image, audio, …): ignored in a lax parse, refused in a strict one.
	unknown []string
}

// UnmarshalJSON accepts a number (Total) or an object of dimensions.
func (m *MaxPrice) UnmarshalJSON(b []byte) error {
	*m = MaxPrice{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' {
		var total uint64
		if err := json.Unmarshal(t, &total); err != nil {
			return fmt.Errorf("max_price must be a whole number of micro-units or an object of them")
		}
		m.Total = &total
		return nil
	}
	var dims map[string]json.RawMessage
	if err := json.Unmarshal(b, &dims); err != nil {
		return fmt.Errorf("max_price: %w", err)
	}
	for k, v := range dims {
		var dst **uint64
		switch k {
		case "prompt":
			dst = &m.Prompt
		case "completion":
			dst = &m.Completion
		case "request":
			dst = &m.Request
		case "total":
			dst = &m.Total
		default:
			m.unknown = append(m.unknown, k)
			continue
		}
		var n uint64
		if err := json.Unmarshal(v, &n); err != nil {
			return fmt.Errorf("max_price.%s must be a whole number of micro-units", k)
		}
		*dst = &n
	}
	sort.Strings(m.unknown)
	return nil
}

// MarshalJSON writes a bare Total as a number, anything else as an object.
func (m MaxPrice) MarshalJSON() ([]byte, error) {
	if m.Total != nil && m.Prompt == nil && m.Completion == nil && m.Request == nil {
		return json.Marshal(*m.Total)
	}
	type plain MaxPrice
	return json.Marshal(plain(m))
}

// Cutoff is a preferred bound on a measured figure: a number (the
// typical, p50 value) or per percentile.
type Cutoff struct {
	P50 *float64 `json:"p50,omitempty"`
	P75 *float64 `json:"p75,omitempty"`
	P90 *float64 `json:"p90,omitempty"`
	P99 *float64 `json:"p99,omitempty"`
}

// UnmarshalJSON accepts a number (p50) or {"p50": …, "p90": …}.
func (c *Cutoff) UnmarshalJSON(b []byte) error {
	*c = Cutoff{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' {
		var v float64
		if err := json.Unmarshal(t, &v); err != nil {
			return fmt.Errorf("a preferred cutoff must be a number or an object of percentiles")
		}
		c.P50 = &v
		return nil
	}
	type plain Cutoff
	return json.Unmarshal(b, (*plain)(c))
}

func (c *Cutoff) check() error {
	if c == nil {
		return nil
	}
	for _, v := range []*float64{c.P50, c.P75, c.P90, c.P99} {
		if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
			return fmt.Errorf("%w: a preferred cutoff must be a finite number ≥ 0", ErrInvalid)
		}
	}
	return nil
}

// Typical is the bound on the typical (mean or median) figure, and Tail
// the bound on the tail (p90 or above): the router keeps a mean and a
// p95 of each provider, so p50 and p75 are held against the one, p90 and
// p99 against the other. ok is false when no bound of that kind is set.
func (c *Cutoff) Typical() (v float64, ok bool) {
	if c == nil {
		return 0, false
	}
	return first(c.P50, c.P75)
}

// Tail: see Typical.
func (c *Cutoff) Tail() (v float64, ok bool) {
	if c == nil {
		return 0, false
	}
	return first(c.P90, c.P99)
}

func first(vs ...*float64) (float64, bool) {
	for _, v := range vs {
		if v != nil {
			return *v, true
		}
	}
	return 0, false
}

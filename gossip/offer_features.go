package gossip

import (
	"fmt"
	"strings"
)

// Request parameters an offer can announce in ModelOffer.Params. The list
// is open: a provider may announce a parameter this node does not know
// (a newer release), and validators accept it, so no honest relay is
// penalised across versions; the router only ever asks about the names
// below.
const (
	ParamTools          = "tools"
	ParamResponseFormat = "response_format"
	ParamLogprobs       = "logprobs"
	ParamTopK           = "top_k"
	ParamSeed           = "seed"
	ParamStop           = "stop"
	ParamPenalties      = "penalties" // frequency_penalty and presence_penalty
	ParamN              = "n"
)

const (
	maxParams     = 32
	maxParamLen   = 32
	maxQuantLen   = 16
	paramAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
)

// Supports reports whether the offer announces param.
func (m *ModelOffer) Supports(param string) bool {
	for _, p := range m.Params {
		if p == param {
			return true
		}
	}
	return false
}

// checkFeatures validates Params and Quant: lowercase tokens, Params
// strictly increasing (one encoding per set, no repeats).
func (m *ModelOffer) checkFeatures() error {
	if len(m.Params) > maxParams {
		return fmt.Errorf("%w: %d params (max %d)", errInvalid, len(m.Params), maxParams)
	}
	for i, p := range m.Params {
		if err := checkToken("params", p, maxParamLen); err != nil {
			return err
		}
		if i > 0 && m.Params[i-1] >= p {
			return fmt.Errorf("%w: params must be sorted without repeats (%q after %q)", errInvalid, p, m.Params[i-1])
		}
	}
	if m.Quant != "" {
		return checkToken("quant", m.Quant, maxQuantLen)
	}
	return nil
}

func checkToken(field, s string, max int) error {
	if s == "" || len(s) > max {
		return fmt.Errorf("%w: %s entry must be 1..%d bytes", errInvalid, field, max)
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(paramAlphabet, s[i]) < 0 {
			return fmt.Errorf("%w: %s entry %q: only a-z, 0-9 and _", errInvalid, field, s)
		}
	}
	return nil
}

package infer

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Request limits enforced by Validate.
const (
	NonceSize      = 16
	ModelIDSize    = 32
	MachineIDSize  = 32
	DigestSize     = 32
	MaxMessages    = 256
	MaxTextBytes   = 1 << 20 // all text of a request together
	MaxTopLogProbs = 20
	MaxStops       = 16
	MaxTopK        = 1 << 20
	MaxMaxTokens   = 1 << 20
	MaxTemperature = 2
)

// Validate checks sizes and limits. Every error wraps ErrInvalidRequest and
// names the offending field. A request that validates always encodes well
// below DefaultMaxRequestSize.
func (r *Request) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)
	}
	if len(r.Nonce) != NonceSize {
		return bad("nonce is %d bytes, want %d", len(r.Nonce), NonceSize)
	}
	if len(r.ModelID) != ModelIDSize {
		return bad("model ID is %d bytes, want %d", len(r.ModelID), ModelIDSize)
	}
	if len(r.QuoteDigest) != 0 && len(r.QuoteDigest) != DigestSize {
		return bad("quote digest is %d bytes, want %d or none", len(r.QuoteDigest), DigestSize)
	}
	if p := r.Pay; p != nil && (len(p.Payer) != AccountSize || len(p.Settler) != AccountSize || len(p.Sig) != SigSize) {
		return bad("pay authorization has payer %d, settler %d and signature %d bytes, want %d, %d and %d",
			len(p.Payer), len(p.Settler), len(p.Sig), AccountSize, AccountSize, SigSize)
	}
	if err := r.Session.validate(); err != nil {
		return bad("session: %v", err)
	}
	if !r.Verification.Valid() {
		return bad("unknown verification level %q (%s)", r.Verification, terms.LevelNames())
	}
	for name, v := range map[string]string{"model": r.Model, "session ID": r.SessionID, "network": r.Network} {
		if len(v) > maxShortLen {
			return bad("%s is %d bytes, limit %d", name, len(v), maxShortLen)
		}
		if !utf8.ValidString(v) {
			return bad("%s is not valid UTF-8", name)
		}
	}
	text := len(r.Prompt) + len(r.Continuation)
	if !utf8.ValidString(r.Prompt) {
		return bad("prompt is not valid UTF-8")
	}
	if len(r.ContinuationTokens) > MaxMaxTokens {
		return bad("%d continuation tokens, limit %d", len(r.ContinuationTokens), MaxMaxTokens)
	}
	for _, t := range r.ContinuationTokens {
		if t < 0 {
			return bad("negative continuation token %d", t)
		}
	}
	if len(r.ContinuationTokens) > 0 && r.Continuation == "" {
		return bad("continuation tokens without continuation text")
	}
	if !utf8.ValidString(r.Continuation) {
		return bad("continuation is not valid UTF-8")
	}
	if r.Chat {
		if len(r.Messages) == 0 {
			return bad("chat request without messages")
		}
		if r.Prompt != "" {
			return bad("chat request with a prompt")
		}
	} else if len(r.Messages) != 0 {
		return bad("text completion with %d messages (set Chat)", len(r.Messages))
	}
	if len(r.Messages) > MaxMessages {
		return bad("%d messages, limit %d", len(r.Messages), MaxMessages)
	}
	for i, m := range r.Messages {
		if err := m.Check(); err != nil {
			return bad("messages[%d].%v", i, err)
		}
		text += m.Size()
	}
	s := r.Sampling
	if math.IsNaN(s.Temperature) || s.Temperature < 0 || s.Temperature > MaxTemperature {
		return bad("temperature %v outside 0..%d", s.Temperature, MaxTemperature)
	}
	if math.IsNaN(s.TopP) || s.TopP < 0 || s.TopP > 1 {
		return bad("top_p %v outside 0..1", s.TopP)
	}
	if s.TopK < 0 || s.TopK > MaxTopK {
		return bad("top_k %d outside 0..%d", s.TopK, MaxTopK)
	}
	if s.MaxTokens < 0 || s.MaxTokens > MaxMaxTokens {
		return bad("max_tokens %d outside 0..%d", s.MaxTokens, MaxMaxTokens)
	}
	if len(s.Stop) > MaxStops {
		return bad("%d stop sequences, limit %d", len(s.Stop), MaxStops)
	}
	for i, st := range s.Stop {
		if st == "" {
			return bad("stop[%d] is empty", i)
		}
		if !utf8.ValidString(st) {
			return bad("stop[%d] is not valid UTF-8", i)
		}
		text += len(st)
	}
	if r.TopLogProbs < 0 || r.TopLogProbs > MaxTopLogProbs {
		return bad("top_logprobs %d outside 0..%d", r.TopLogProbs, MaxTopLogProbs)
	}
	if text > MaxTextBytes {
		return bad("%d bytes of text, limit %d", text, MaxTextBytes)
	}
	return nil
}

// maxPeerIDLen bounds a peer ID's bytes (a multihash of a public key).
const maxPeerIDLen = 128

func (s *SessionTurn) validate() error {
	if s == nil {
		return nil
	}
	if s.ID == "" || len(s.ID) > maxShortLen || !utf8.ValidString(s.ID) {
		return fmt.Errorf("id must be 1..%d bytes of UTF-8", maxShortLen)
	}
	if s.Turn == 0 {
		return fmt.Errorf("turn must be at least 1")
	}
	named := len(s.SuccessorPeer) != 0
	if named != (len(s.SuccessorMachine) != 0) || named != (len(s.SuccessorKey) != 0) {
		return fmt.Errorf("successor peer, machine and key come together or not at all")
	}
	if named && (len(s.SuccessorPeer) > maxPeerIDLen || len(s.SuccessorMachine) != MachineIDSize || len(s.SuccessorKey) != SessionKeySize) {
		return fmt.Errorf("successor peer %d bytes (max %d), machine %d (want %d), key %d (want %d)",
			len(s.SuccessorPeer), maxPeerIDLen, len(s.SuccessorMachine), MachineIDSize, len(s.SuccessorKey), SessionKeySize)
	}
	return nil
}

// SessionKeySize is the size of an X-Wing HPKE public key
// (gossip.StandbyKeySize; infer does not import gossip).
const SessionKeySize = 1216

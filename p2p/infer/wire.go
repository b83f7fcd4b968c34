package infer

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ProtocolID is the libp2p protocol of forwarded inference.
const ProtocolID = "/tenzro/infer/1.0.0"

// ServiceName is the resource-manager service both ends attach streams to;
// p2p.AddServiceLimits sets its per-peer limits.
const ServiceName = p2p.ServiceInfer

// Protocol defaults.
const (
	// DefaultMaxRequestSize caps the request frame a server accepts.
	DefaultMaxRequestSize = 2 << 20
	// DefaultMaxFrameSize caps the frames a client accepts; a server never
	// sends a larger frame.
	DefaultMaxFrameSize = 1 << 20
)

// Typed failures of Call besides *ErrorFrame.
var (
	// ErrStalled: the gap between two frames exceeded ClientConfig.StallTimeout.
	ErrStalled = errors.New("infer: stream stalled")
	// ErrFirstTokenTimeout: no frame arrived within ClientConfig.FirstTokenTimeout.
	ErrFirstTokenTimeout = errors.New("infer: first token timeout")
	// ErrMalformedFrame: the provider sent a frame that does not decode, breaks
	// a limit or carries no (or more than one) frame kind.
	ErrMalformedFrame = errors.New("infer: malformed frame")
	// ErrNoFinal: the stream ended (closed, reset or broken) before a final
	// or error frame: a cut stream, never a complete answer.
	ErrNoFinal = errors.New("infer: stream ended without a final frame")
	// ErrUnreachable: no stream to the provider could be opened (no
	// connection and the dial failed, or the connection died while the
	// stream was negotiated): the provider never saw the request, and a
	// router fails over at once instead of waiting for a first token.
	ErrUnreachable = errors.New("infer: provider unreachable")
	// ErrInvalidRequest: Request.Validate refused the request.
	ErrInvalidRequest = errors.New("infer: invalid request")
	// ErrStop, wrapped in the error of Call's token callback, asks the
	// provider to stop but still answer: Call half-closes the stream and
	// waits up to ClientConfig.StopGrace for the final frame.
	ErrStop = errors.New("infer: stopped by the caller")
	// ErrStoppedByClient is the cause of a handler's context when the
	// client half-closed its side to stop the call (see Stopped).
	ErrStoppedByClient = errors.New("infer: client stopped the call")
	// ErrWriteStalled is the cause of a handler's context when a frame
	// write made no progress for ServerConfig.WriteStallTimeout.
	ErrWriteStalled = errors.New("infer: frame write stalled")
)

// Request is what a buyer's gateway sends a provider. The buyer's access
// token is never part of it.
type Request struct {
	Nonce        []byte              `cbor:"1,keyasint"`            // NonceSize random bytes, unique per attempt
	ModelID      []byte              `cbor:"2,keyasint"`            // ModelIDSize-byte catalog model ID
	Model        string              `cbor:"3,keyasint,omitempty"`  // the model name the buyer asked for (informational)
	Chat         bool                `cbor:"4,keyasint,omitempty"`  // Messages, not Prompt
	Messages     []inference.Message `cbor:"5,keyasint,omitempty"`  // chat
	Prompt       string              `cbor:"6,keyasint,omitempty"`  // text completion
	Sampling     inference.Sampling  `cbor:"7,keyasint"`            // incl. Seed, MaxTokens, Stop
	TopLogProbs  int                 `cbor:"8,keyasint,omitempty"`  // log-probs per output token (0..MaxTopLogProbs)
	Stream       bool                `cbor:"9,keyasint,omitempty"`  // the buyer streams; text arrives in token frames either way
	Verification terms.Verification  `cbor:"10,keyasint"`           // none | receipt | optimistic | tee
	Continuation string              `cbor:"11,keyasint,omitempty"` // text already emitted by another provider
	SessionID    string              `cbor:"12,keyasint,omitempty"`
	QuoteDigest  []byte              `cbor:"13,keyasint,omitempty"` // DigestSize bytes or empty
	// ContinuationTokens are the token IDs behind Continuation, when the
	// broken provider sent them: resuming from IDs is exact, resuming from
	// text only when re-tokenizing reproduces them.
	ContinuationTokens []int `cbor:"14,keyasint,omitempty"`
	// Network is the caller's network name (ClientConfig.Network); the
	// server refuses another network's request before anything else.
	Network string `cbor:"15,keyasint,omitempty"`
	// Pay names who pays for the call: the payer's escrow and its settler,
	// whose signature authorizes this caller's peer ID to spend from it
	// (see consensus/ledger.SignPayAuth). A provider on a chain serves
	// unpaid calls only from callers it trusts.
	Pay *PayAuth `cbor:"16,keyasint,omitempty"`
	// Session, when set, makes this call one turn of a session with
	// continuity (DESIGN.md "Sessions and successors").
	Session *SessionTurn `cbor:"17,keyasint,omitempty"`
}

// SessionTurn tells a provider which turn of which session it serves and,
// when it serves as primary, which successor to seal the session state to
// after the turn.
type SessionTurn struct {
	ID   string `cbor:"1,keyasint"` // the session ID (gateway-chosen or the buyer's)
	Turn uint32 `cbor:"2,keyasint"` // 1-based
	// The successor the gateway assigned; empty when the session has none.
	SuccessorPeer    []byte `cbor:"3,keyasint,omitempty"` // peer ID bytes
	SuccessorMachine []byte `cbor:"4,keyasint,omitempty"` // MachineIDSize bytes
	SuccessorKey     []byte `cbor:"5,keyasint,omitempty"` // its announced X-Wing HPKE public key
	// Failover: the turn reaches the session's successor because its
	// primary is down; it serves from the state it holds for the session.
	Failover bool `cbor:"6,keyasint,omitempty"`
}

// PayAuth is a settler's authorization of the calling peer for a payer.
type PayAuth struct {
	Payer   []byte `cbor:"1,keyasint"` // AccountSize bytes
	Settler []byte `cbor:"2,keyasint"` // AccountSize bytes: the settler's Ed25519 public key
	Sig     []byte `cbor:"3,keyasint"` // SigSize bytes over ledger.PayAuthSigningBytes
}

// Sizes of PayAuth's fields.
const (
	AccountSize = 32
	SigSize     = 64
)

// Frame is one provider → gateway frame: exactly one field is set. Zero or
// more Token frames are followed by exactly one Final or Error frame.
type Frame struct {
	Token *TokenFrame `cbor:"1,keyasint,omitempty"`
	Final *FinalFrame `cbor:"2,keyasint,omitempty"`
	Error *ErrorFrame `cbor:"3,keyasint,omitempty"`
}

// TokenFrame carries output text; it may batch a few tokens. TopK, when
// present, holds one distribution per generated token.
type TokenFrame struct {
	Text     string                `cbor:"1,keyasint,omitempty"`
	TokenIDs []int                 `cbor:"2,keyasint,omitempty"`
	TopK     [][]inference.LogProb `cbor:"3,keyasint,omitempty"`
	// LogProbs, when the request asked for them, are the same
	// distributions by token text, as a buyer is shown them: a gateway
	// relays them without the model's tokenizer, and an upstream engine
	// gives nothing else.
	LogProbs []terms.TokenLogProbs `cbor:"4,keyasint,omitempty"`
	// Last is not sent: it tells the server this is the answer's last
	// token, which it then writes in one piece with the final frame (one
	// muxer frame, one wake-up of the client, instead of two).
	Last bool `cbor:"-"`
}

// maxLogProbTokens caps the log-prob entries of one token frame.
const maxLogProbTokens = 256

// checkLogProbs: bounded, valid UTF-8, finite (a client's JSON cannot
// carry NaN or infinities).
func checkLogProbs(lps []terms.TokenLogProbs) error {
	if len(lps) > maxLogProbTokens {
		return fmt.Errorf("%w: %d log-prob entries in one frame, limit %d", ErrMalformedFrame, len(lps), maxLogProbTokens)
	}
	ok := func(tok string, raw []byte, lp float32) bool {
		f := float64(lp)
		return len(tok) <= maxShortLen && len(raw) <= maxShortLen && utf8.ValidString(tok) && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	for i, lp := range lps {
		if len(lp.Top) > MaxTopLogProbs {
			return fmt.Errorf("%w: log-probs[%d]: %d alternatives, limit %d", ErrMalformedFrame, i, len(lp.Top), MaxTopLogProbs)
		}
		if !ok(lp.Token, lp.Bytes, lp.LogProb) {
			return fmt.Errorf("%w: log-probs[%d]: token longer than %d bytes, not UTF-8, or not a finite log-prob", ErrMalformedFrame, i, maxShortLen)
		}
		for j, a := range lp.Top {
			if !ok(a.Token, a.Bytes, a.LogProb) {
				return fmt.Errorf("%w: log-probs[%d].top[%d]: token longer than %d bytes, not UTF-8, or not a finite log-prob", ErrMalformedFrame, i, j, maxShortLen)
			}
		}
	}
	return nil
}

// FinalFrame ends a successful answer with usage, receipt and commitment.
type FinalFrame struct {
	FinishReason     string `cbor:"1,keyasint,omitempty"`
	PromptTokens     int    `cbor:"2,keyasint,omitempty"`
	CompletionTokens int    `cbor:"3,keyasint,omitempty"`
	Model            string `cbor:"4,keyasint,omitempty"`
	Receipt          []byte `cbor:"5,keyasint,omitempty"` // signed envelope bytes, opaque here
	Commitment       []byte `cbor:"6,keyasint,omitempty"` // opaque here
	// Experts, for a MoE model whose experts ran at holders, is each
	// holder's part (see ExpertUse); absent for every other call, so
	// their frames encode as before.
	Experts []ExpertUse `cbor:"7,keyasint,omitempty"`
	// Written, if set by the handler, runs once the frame was written to
	// the stream (never sent): a provider then counts the call as served.
	Written func() `cbor:"-"`
}

// ErrorFrame ends a failed answer. It is also the error type: a Handler
// returns one to choose the frame sent, and Call returns the one received.
type ErrorFrame struct {
	Status       int    `cbor:"1,keyasint"` // HTTP-like: 400, 404, 429, 500, 503, ...
	Code         string `cbor:"2,keyasint,omitempty"`
	Message      string `cbor:"3,keyasint,omitempty"`
	RetryAfterMs int64  `cbor:"4,keyasint,omitempty"`
	Retryable    bool   `cbor:"5,keyasint,omitempty"`
}

// Error implements error.
func (e *ErrorFrame) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "infer: provider error %d", e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.RetryAfterMs > 0 {
		fmt.Fprintf(&b, " (retry after %d ms)", e.RetryAfterMs)
	}
	return b.String()
}

// Limits on the fields of frames.
const (
	maxCodeLen    = 64
	maxMessageLen = 4 << 10
	maxShortLen   = 256 // model names, finish reasons, session IDs, roles
)

// unmarshalRequest strictly decodes a request frame (at most max bytes)
// without validating it, so the server can check its network first.
func unmarshalRequest(b []byte, max int) (*Request, error) {
	req := new(Request)
	if err := cborx.Unmarshal(b, max, req); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return req, nil
}

// decodeFrame strictly decodes a provider frame and checks it.
func decodeFrame(b []byte, max int) (*Frame, error) {
	f := new(Frame)
	if err := cborx.Unmarshal(b, max, f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedFrame, err)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// check enforces what decoding alone does not: one kind per frame and sane
// values.
func (f *Frame) check() error {
	n := 0
	for _, set := range []bool{f.Token != nil, f.Final != nil, f.Error != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: %d frame kinds set, want 1", ErrMalformedFrame, n)
	}
	switch {
	case f.Token != nil:
		if !utf8.ValidString(f.Token.Text) {
			return fmt.Errorf("%w: token text is not valid UTF-8", ErrMalformedFrame)
		}
		for _, id := range f.Token.TokenIDs {
			if id < 0 {
				return fmt.Errorf("%w: negative token ID %d", ErrMalformedFrame, id)
			}
		}
		if err := checkLogProbs(f.Token.LogProbs); err != nil {
			return err
		}
	case f.Final != nil:
		if f.Final.PromptTokens < 0 || f.Final.CompletionTokens < 0 {
			return fmt.Errorf("%w: negative token count", ErrMalformedFrame)
		}
		if len(f.Final.FinishReason) > maxShortLen || len(f.Final.Model) > maxShortLen {
			return fmt.Errorf("%w: final frame string too long", ErrMalformedFrame)
		}
		if !utf8.ValidString(f.Final.FinishReason) || !utf8.ValidString(f.Final.Model) {
			return fmt.Errorf("%w: final frame string is not valid UTF-8", ErrMalformedFrame)
		}
		if err := checkExperts(f.Final.Experts); err != nil {
			return err
		}
	case f.Error != nil:
		e := f.Error
		if e.Status < 400 || e.Status > 599 {
			return fmt.Errorf("%w: error status %d outside 400..599", ErrMalformedFrame, e.Status)
		}
		if e.RetryAfterMs < 0 {
			return fmt.Errorf("%w: negative retry-after", ErrMalformedFrame)
		}
		if len(e.Code) > maxCodeLen || len(e.Message) > maxMessageLen {
			return fmt.Errorf("%w: error frame string too long", ErrMalformedFrame)
		}
		if !utf8.ValidString(e.Code) || !utf8.ValidString(e.Message) {
			return fmt.Errorf("%w: error frame string is not valid UTF-8", ErrMalformedFrame)
		}
	}
	return nil
}

// encodeFrame encodes f, refusing frames a client would reject.
func encodeFrame(f *Frame) ([]byte, error) {
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("infer: refusing to send: %w", err)
	}
	b, err := cborx.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("infer: encode frame: %w", err)
	}
	if len(b) > DefaultMaxFrameSize {
		return nil, fmt.Errorf("infer: frame of %d bytes exceeds %d", len(b), DefaultMaxFrameSize)
	}
	return b, nil
}

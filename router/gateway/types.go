package gateway

import (
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// Request is one buyer request as the gateway routes it.
type Request struct {
	Model       string // a model name or hex catalog ID
	Chat        bool
	Messages    []inference.Message
	Prompt      string
	Sampling    inference.Sampling
	TopLogProbs int
	Stream      bool

	Strategy     string             // "" = weighted
	Verification terms.Verification // none | receipt | optimistic | tee
	NoHedge      bool               // the buyer opted out of hedging
	MaxPrice     *uint64            // refuse providers quoting more (micro-units)
	PinProvider  string             // a peer ID
	PinRegion    string             // a country code or continent
	// AllowUnregistered opts in to providers the chain does not know (at
	// verification none only).
	AllowUnregistered bool
	// Prefs are the buyer's provider preferences (OpenRouter's `provider`
	// object); nil constrains nothing.
	Prefs *prefs.Preferences
	// Params are request parameters (gossip.Param*) the API layer saw the
	// buyer use beyond those the gateway sees itself (usedParams).
	Params []string
	// Models are fallbacks after Model, tried in turn when no provider
	// of the one before could serve (OpenRouter's `models`).
	Models []string

	Payer string // the buyer's account at this node
	// Probe marks a validator's synthetic probe call (reported as such to
	// Deps.OnCall).
	Probe bool
	// Session makes the request one turn of a session (pinned primary,
	// standby successor); nil routes it on its own.
	Session *SessionRequest
	// turn is the session turn in flight (set by Route).
	turn *sessionTurn
}

// Provider names who served.
type Provider struct {
	Name       string `json:"name"`
	PeerID     string `json:"peer_id"`
	MachineID  string `json:"machine_id"`
	KeyBackend string `json:"key_backend"`
	Region     string `json:"region"`
}

// ReceiptInfo is the receipt as the buyer sees it.
type ReceiptInfo struct {
	Envelope []byte       `json:"envelope"` // the signed envelope, base64 in JSON
	Verified bool         `json:"verified"`
	Problem  string       `json:"problem,omitempty"`
	Receipt  *ReceiptView `json:"receipt,omitempty"`
	Capped   []string     `json:"capped,omitempty"` // dimensions billed below the provider's claim
	// Counted: dimensions the gateway counted itself with the model's
	// tokenizer ("input", "output") instead of taking the claim.
	Counted []string `json:"counted,omitempty"`
	// Commitment holds the TOPLOC proofs (base64) of an optimistic request,
	// and TokenIDs the output tokens they commit to: with the model's
	// weights anyone can recompute the steps by one prefill and check them.
	Commitment []byte `json:"commitment,omitempty"`
	TokenIDs   []int  `json:"token_ids,omitempty"`
}

// Delta is one piece of the answer as it reaches the buyer: text and, when
// the request asked for them, the log-probs of the tokens that carried it.
type Delta struct {
	Text     string
	LogProbs []terms.TokenLogProbs
}

// Result is a finished request.
type Result struct {
	Text             string
	LogProbs         []terms.TokenLogProbs // of every token the buyer received, in order
	FinishReason     string
	Model            string // the model name that actually served
	PromptTokens     int
	CompletionTokens int
	Provider         Provider
	Receipt          *ReceiptInfo
	Payment          *receipt.Bill
	// Signed is the chain's payment record the gateway signed as settler
	// (with Payments), which the provider collects on chain.
	Signed    *receipt.PaymentRecord
	Attempts  int
	Hedged    bool
	Continued bool
	// Session is the turn's session, when the request belonged to one.
	Session *SessionInfo
	// Experts is each expert holder's part of a verified call of a MoE
	// model whose experts ran at holders (the serving provider's final
	// frame); nil for every other call.
	Experts []infer.ExpertUse
}

// Error is a routing failure with the HTTP status it maps to.
type Error struct {
	Status  int
	Code    string
	Message string
	// Param names the request field at fault, for a 400.
	Param      string
	RetryAfter time.Duration
	// Partial is set when some text had already been sent to the buyer.
	Partial bool
	// Excluded names each provider the buyer's preferences removed, when
	// they removed every one.
	Excluded []Exclusion
	// heldBack: every candidate is held back by its breaker (a
	// Retry-After, a backoff, an open cooldown) for RetryAfter; the
	// request may wait it out (see retry.go).
	heldBack bool
}

func (e *Error) Error() string { return fmt.Sprintf("gateway: %d %s: %s", e.Status, e.Code, e.Message) }

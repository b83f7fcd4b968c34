package openai

import (
	"context"
	"errors"
	"net/http"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// GatewayBackend serves OpenAI requests by routing them to providers;
// every call is billed to the account of its buyer's token.
type GatewayBackend struct {
	gw     *gateway.Gateway
	buyers *Buyers
}

// NewGatewayBackend serves gw's routes to the buyers bs knows.
func NewGatewayBackend(gw *gateway.Gateway, bs *Buyers) GatewayBackend {
	return GatewayBackend{gw: gw, buyers: bs}
}

// Models lists every served catalog ID, and after it each name that
// resolves to exactly that ID (owned_by names the ID): an offer announced
// under a name bound to another ID (a squatter) appears under its ID only.
func (b GatewayBackend) Models(ctx context.Context) []Model {
	var out []Model
	for _, m := range b.gw.Models(ctx) {
		out = append(out, Model{ID: m.ID, Object: "model", OwnedBy: "tenzro"})
		for _, name := range m.Names {
			out = append(out, Model{ID: name, Object: "model", OwnedBy: "tenzro:" + m.ID})
		}
	}
	return out
}

// TenzroInfo is the response's `tenzro` object.
type TenzroInfo struct {
	Provider  gateway.Provider     `json:"provider"`
	Receipt   *gateway.ReceiptInfo `json:"receipt,omitempty"`
	Payment   any                  `json:"payment,omitempty"`
	Attempts  int                  `json:"attempts"`
	Hedged    bool                 `json:"hedged"`
	Continued bool                 `json:"continued"`
	// Session is the turn's session (tenzro.session in the request).
	Session *gateway.SessionInfo `json:"session,omitempty"`
	// Experts is each expert holder's part of a MoE call whose experts
	// ran at holders: rows computed and the amount signed to it.
	Experts []infer.ExpertUse `json:"experts,omitempty"`
}

func (b GatewayBackend) Complete(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	payer, err := b.buyers.Account(req.Header)
	if err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key", Message: err.Error()}
	}
	ctx, kc, err := b.buyers.admitKey(ctx, req.Header, req.Model)
	if err != nil {
		return nil, err
	}
	defer kc.done()
	opts, oerr := ParseOptions(req.Tenzro, req.Header)
	if oerr != nil {
		return nil, oerr
	}
	pr, perr := routingPrefs(req.Provider, opts.Preferences)
	if perr == nil {
		pr, perr = kc.defaults(pr)
	}
	if perr != nil {
		return nil, perr
	}
	gr := &gateway.Request{
		Model: req.Model, Chat: req.Chat, Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling,
		TopLogProbs: req.TopLogProbs, Stream: req.Stream, Strategy: opts.Strategy, Verification: opts.Verification,
		NoHedge: opts.Hedge != nil && !*opts.Hedge, PinProvider: opts.Provider, PinRegion: opts.Region,
		AllowUnregistered: opts.AllowUnregistered, Payer: payer, Session: sessionRequest(opts.Session),
		Prefs: pr, Models: req.Models, Params: req.Params,
	}
	kc.limit(gr)
	res, err := b.gw.Route(ctx, gr, func(d gateway.Delta) error {
		return onDelta(Delta{Text: d.Text, LogProbs: d.LogProbs})
	})
	if err != nil {
		return nil, openaiError(err)
	}
	info := TenzroInfo{Provider: res.Provider, Receipt: res.Receipt, Attempts: res.Attempts, Hedged: res.Hedged, Continued: res.Continued,
		Session: res.Session, Experts: res.Experts}
	if res.Payment != nil {
		v := gateway.ViewPayment(res.Payment)
		v.Signed = gateway.ViewSigned(res.Signed)
		info.Payment = v
	}
	usage := Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens}
	if r := res.Receipt; r != nil && r.Receipt != nil && r.Receipt.Units.CachedTokens > 0 {
		usage.PromptTokensDetails = &PromptTokensDetails{CachedTokens: int(min(r.Receipt.Units.CachedTokens, 1<<31-1))}
	}
	return &Result{
		Model: res.Model, Text: res.Text, FinishReason: res.FinishReason, LogProbs: res.LogProbs,
		Usage: usage, Tenzro: info,
	}, nil
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status < 500:
		return "invalid_request_error"
	default:
		return "server_error"
	}
}

// EndSession is SessionEnder: DELETE /v1/sessions/{id} ends the
// calling buyer's session at this gateway.
func (b GatewayBackend) EndSession(ctx context.Context, header http.Header, id string) (any, error) {
	payer, err := b.buyers.Account(header)
	if err != nil {
		return nil, &Error{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key", Message: err.Error()}
	}
	out, err := b.gw.EndSession(ctx, id, payer)
	if err != nil {
		return nil, openaiError(err)
	}
	return out, nil
}

// openaiError is a gateway error as the routes answer it; any
// other error passes unchanged (a 500).
func openaiError(err error) error {
	var ge *gateway.Error
	if errors.As(err, &ge) {
		return &Error{Status: ge.Status, Type: errorType(ge.Status), Code: ge.Code, Message: ge.Message, Param: ge.Param,
			RetryAfter: int(ge.RetryAfter.Seconds()), Tenzro: excludedInfo(ge.Excluded)}
	}
	return err
}

// sessionRequest converts the parsed `tenzro.session` for the gateway.
func sessionRequest(o *SessionOptions) *gateway.SessionRequest {
	if o == nil {
		return nil
	}
	s := &gateway.SessionRequest{ID: o.ID, Jurisdiction: o.Jurisdiction}
	switch o.Continuity {
	case ContinuityOn:
		s.Continuity = gateway.ContinuityOn
	case ContinuityRequired:
		s.Continuity = gateway.ContinuityRequired
	}
	return s
}

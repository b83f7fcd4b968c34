package node

import (
	"context"
	"net/http"
	"sync"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// gatewayBackend serves OpenAI requests by routing them to providers.
type gatewayBackend struct {
	n      *Node
	gw     *gateway.Gateway
	buyers *buyers
}

// Models lists every served catalog ID, and after it each name that
// resolves to exactly that ID (owned_by names the ID): an offer announced
// under a name bound to another ID (a squatter) appears under its ID only.
func (b gatewayBackend) Models(ctx context.Context) []openai.Model {
	var out []openai.Model
	for _, m := range b.gw.Models(ctx) {
		out = append(out, openai.Model{ID: m.ID, Object: "model", OwnedBy: "tenzro"})
		for _, name := range m.Names {
			out = append(out, openai.Model{ID: name, Object: "model", OwnedBy: "tenzro:" + m.ID})
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

func (b gatewayBackend) Complete(ctx context.Context, req *openai.Request, onDelta func(openai.Delta) error) (*openai.Result, error) {
	payer, err := b.buyers.account(req.Header)
	if err != nil {
		return nil, &openai.Error{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key", Message: err.Error()}
	}
	opts, oerr := openai.ParseOptions(req.Tenzro, req.Header)
	if oerr != nil {
		return nil, oerr
	}
	gr := &gateway.Request{
		Model: req.Model, Chat: req.Chat, Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling,
		TopLogProbs: req.TopLogProbs, Stream: req.Stream, Strategy: opts.Strategy, Verification: opts.Verification,
		NoHedge: opts.Hedge != nil && !*opts.Hedge, MaxPrice: opts.MaxPrice, PinProvider: opts.Provider, PinRegion: opts.Region,
		AllowUnregistered: opts.AllowUnregistered, Payer: payer, Session: sessionRequest(opts.Session),
	}
	res, err := b.gw.Route(ctx, gr, func(d gateway.Delta) error {
		return onDelta(openai.Delta{Text: d.Text, LogProbs: d.LogProbs})
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
	usage := openai.Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens}
	if r := res.Receipt; r != nil && r.Receipt != nil && r.Receipt.Units.CachedTokens > 0 {
		usage.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: int(min(r.Receipt.Units.CachedTokens, 1<<31-1))}
	}
	return &openai.Result{
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

// chainNames resolves model names through the chain's name records, each
// read with its proof from the node's own chain. A name's answer is kept
// for the block it was read in: every request names its model, and a
// record changes only with a block.
type chainNames struct {
	c *consensus.Node

	mu     sync.Mutex
	height int64 // the block the answers in ids were read at
	ids    map[string]nameSeen
}

type nameSeen struct {
	id [32]byte
	ok bool
}

// maxNamesSeen bounds the names kept for one block.
const maxNamesSeen = 1024

func newChainNames(c *consensus.Node) *chainNames {
	return &chainNames{c: c, ids: map[string]nameSeen{}}
}

func (c *chainNames) Resolve(ctx context.Context, name string) ([32]byte, bool, error) {
	if ledger.CheckName(name) != nil {
		return [32]byte{}, false, nil // no record can bind it
	}
	h := c.c.App().Height()
	c.mu.Lock()
	if c.height != h {
		c.height, c.ids = h, map[string]nameSeen{}
	}
	seen, hit := c.ids[name]
	c.mu.Unlock()
	if hit {
		return seen.id, seen.ok, nil
	}
	id, _, ok, err := c.c.NameRecord(ctx, name)
	if err != nil {
		return id, ok, err
	}
	c.mu.Lock()
	// Kept only when no block committed during the read: the answer is
	// then the one of block h.
	if c.height == h && c.c.App().Height() == h && len(c.ids) < maxNamesSeen {
		c.ids[name] = nameSeen{id: id, ok: ok}
	}
	c.mu.Unlock()
	return id, ok, nil
}

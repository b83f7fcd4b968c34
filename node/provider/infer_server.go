package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/upstream"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// inferServer answers /tenzro/infer/1.0.0 on a provider: it runs the
// request on the model's engine, streams tokens, and signs a receipt with
// the node's certified session key.
type inferServer struct {
	p          *Provider
	set        *modelSet
	unregister func()
	trusted    map[peer.ID]bool
	credit     atomic.Pointer[credit] // nil: calls are not paid (no chain)
}

func (s *inferServer) Start(context.Context) error {
	cfg := s.p.cfg
	trusted := make(map[peer.ID]bool, len(cfg.TrustedCallers))
	for _, c := range cfg.TrustedCallers {
		if id, err := peer.Decode(c); err == nil {
			trusted[id] = true
		}
	}
	s.trusted = trusted
	registered := s.p.d.Registered
	known := func(id peer.ID) bool { return trusted[id] || (registered != nil && registered(id)) }
	scfg := infer.ServerConfig{
		Network: s.p.d.Network, MaxConcurrent: 4 * int(cfg.Capacity), MaxPerPeer: cfg.MaxPerPeer,
		Known: known, UnknownConcurrency: cfg.UnknownConcurrency, UnknownRate: cfg.UnknownRatePerMinute, Clock: s.p.d.Clock,
		Registerer: s.p.d.Registerer,
	}
	if d := s.p.d; d.Chain != nil && d.Payments != nil && d.Escrow != nil {
		chainID := d.Chain.App().ChainID()
		if chainID == "" {
			return errors.New("provider: the chain has no ID yet; credit control needs it")
		}
		c := newCredit(chainID, d.Escrow, d.Payments, d.Clock, cfg.RecordWait)
		c.height = d.Chain.App().Height
		s.credit.Store(c)
		scfg.Paid = c.verified
	}
	s.unregister = infer.Register(s.p.d.Host.Host(), scfg, s.handle, s.p.d.Log)
	return nil
}

func (s *inferServer) Stop(context.Context) error {
	if s.unregister != nil {
		s.unregister()
	}
	return nil
}

// expertsRetryAfter is the retry hint of a MoE call no holder could take
// a batch of: about how long finding or re-dialling a holder takes.
const expertsRetryAfter = time.Second

func errFrame(status int, code, format string, args ...any) *infer.ErrorFrame {
	return &infer.ErrorFrame{Status: status, Code: code, Message: fmt.Sprintf(format, args...),
		Retryable: status >= 500 || status == http.StatusTooManyRequests}
}

func (s *inferServer) handle(ctx context.Context, req *infer.Request, from peer.ID, send func(*infer.TokenFrame) error) (*infer.FinalFrame, error) {
	m := s.set.find(hex.EncodeToString(req.ModelID))
	if m == nil {
		return nil, errFrame(http.StatusNotFound, terms.CodeModelNotServed, "model %x is not served here", req.ModelID)
	}
	offer, st, eng := m.snapshot()
	if !offer.Serves(req.Verification) {
		return nil, errFrame(http.StatusBadRequest, terms.CodeVerificationUnsupported, "verification %q is not offered for %s", req.Verification, offer.Name)
	}
	if e := refuseUnannounced(offer, req); e != nil {
		return nil, e
	}
	if req.Verification == terms.VerifyTEE && !s.p.attest.binds(s.p.d.Session) {
		return nil, errFrame(http.StatusBadRequest, terms.CodeVerificationUnsupported, "verification %q: no verified attestation binds this provider's current session key", req.Verification)
	}
	up := m.upstream()
	if up != nil && req.Verification == terms.VerifyOptimistic {
		// Commitments need the token IDs of every step's top-k, which an
		// OpenAI-compatible upstream does not expose.
		return nil, errFrame(http.StatusBadRequest, terms.CodeCommitmentsUnavailable, "an upstream engine cannot produce logit commitments")
	}
	if mode := m.continuationMode(); up != nil && req.Continuation != "" && !upstream.CanContinue(mode, req.Chat) {
		return nil, errFrame(http.StatusBadRequest, terms.CodeContinuationUnsupported, "this upstream engine (continuation = %q) cannot continue another provider's text", mode)
	}
	if eng == nil && up == nil {
		e := errFrame(http.StatusServiceUnavailable, "model_"+string(st), "model %s is %s here", offer.Name, st)
		e.RetryAfterMs = 1000
		return nil, e
	}
	if down, why := m.upstreamDown(); down {
		e := errFrame(http.StatusServiceUnavailable, "model_"+string(st), "model %s is %s here: its upstream engine does not answer: %v", offer.Name, st, why)
		e.RetryAfterMs = 1000
		return nil, e
	}
	pay, err := s.admitPayment(ctx, from, req, offer)
	if err != nil {
		return nil, err
	}
	defer s.endPayment(pay)
	select {
	case s.set.slots <- struct{}{}:
	default:
		e := errFrame(http.StatusTooManyRequests, terms.CodeCapacity, "all %d slots busy", cap(s.set.slots))
		e.RetryAfterMs = 1000
		return nil, e
	}
	s.set.inFlight.Add(1)
	defer func() { <-s.set.slots; s.set.inFlight.Add(-1) }()

	f, cached, err := s.run(ctx, req, offer, eng, up, send)
	if err == nil {
		s.owe(pay, req, offer, f, cached, up == nil)
	}
	return f, err
}

// run serves an admitted request on the model's engine or upstream.
// cached is how many prompt tokens came from the engine's prefix cache.
func (s *inferServer) run(ctx context.Context, req *infer.Request, offer gossip.ModelOffer, eng inference.Engine, up *upstream.Client, send func(*infer.TokenFrame) error) (f *infer.FinalFrame, cached int, err error) {
	if up != nil {
		f, err := s.relayUpstream(ctx, up, req, offer, send)
		return f, 0, err
	}
	gr := inference.GenerateRequest{Sampling: req.Sampling, LogProbs: req.TopLogProbs, ContinuationText: req.Continuation}
	if req.Session != nil {
		// The session's conversation is this engine's cache key. A turn
		// waits for the session's pending pre-fill (the state a successor
		// was sent, or the primary's own last turn): computing the
		// prefix again would take longer.
		gr.CacheKey = req.Session.ID
		s.p.sess.waitWarm(ctx, req.Session.ID)
	}
	// Resume from the exact tokens when they spell the text the receipt's
	// input commitment covers, plus at most what the broken provider held
	// back at the break (the engine replays the tokens and holds the same
	// bytes back); otherwise, for tokens that do not match, from the text.
	if len(req.ContinuationTokens) > 0 {
		spelled := eng.Detokenize(req.ContinuationTokens)
		if resumable(spelled, req.Continuation, req.Sampling.Stop) {
			gr.Continuation = req.ContinuationTokens
		}
	}
	if req.Chat {
		gr.Messages = req.Messages
	} else {
		gr.Prompt = req.Prompt
	}
	// Token text travels as CBOR text, which must be valid UTF-8; a random
	// or damaged model can emit byte sequences that never become valid, so
	// each piece is sanitised byte by byte (inference.ValidText, which a
	// gateway can reproduce from the token IDs) and the receipt hashes
	// exactly what was sent.
	var sent strings.Builder
	var delivered int // tokens whose frame was written
	var proofs *commit.Builder
	if req.Verification == terms.VerifyOptimistic {
		proofs = commit.NewBuilder(eng.Info().VocabSize)
		gr.LogProbs = max(gr.LogProbs, commit.TopK)
	}
	// A MoE model whose experts run at holders accounts for them per call.
	gctx, call := startCall(ctx, eng)
	var ids []uint32 // the token IDs sent, which the receipt binds
	res, err := eng.Generate(gctx, gr, func(t inference.Token) error {
		text := inference.ValidText(t.Text)
		tf := &infer.TokenFrame{Text: text, TokenIDs: []int{t.ID}, Last: t.Last}
		if req.TopLogProbs > 0 {
			top := t.TopK[:min(len(t.TopK), req.TopLogProbs)]
			tf.TopK = [][]inference.LogProb{top}
			tf.LogProbs = []terms.TokenLogProbs{wireLogProbs(eng, t, top)}
		}
		if err := send(tf); err != nil {
			return err
		}
		sent.WriteString(text)
		delivered++
		// Committed once sent, so the proofs' steps and the signed IDs
		// are exactly the tokens the gateway received, even when the
		// buyer leaves mid-answer.
		if proofs != nil {
			if _, err := proofs.Add(t.TopK[:min(len(t.TopK), commit.TopK)]); err != nil {
				return err
			}
			ids = append(ids, uint32(t.ID))
		}
		return nil
	})
	if err != nil && infer.Stopped(ctx) {
		// The buyer left: a receipt for what it was sent, so the gateway
		// bills the delivered part.
		prompt, perr := eng.EncodePrompt(gr)
		if perr != nil {
			call.finish(ctx, false)
			return nil, 0, errFrame(http.StatusInternalServerError, terms.CodeReceiptFailed, "%v", perr)
		}
		res = inference.Result{Prompt: prompt, Tokens: make([]int, delivered), FinishReason: FinishStopped, CachedTokens: res.CachedTokens}
		err = nil
	}
	// The holders of an answered call are paid before the receipt, which
	// claims their expert-tokens, is signed.
	experts := call.finish(ctx, err == nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if errors.Is(err, expert.ErrNoHolder) {
			// Not the buyer's fault: this provider cannot reach a holder now.
			e := errFrame(http.StatusServiceUnavailable, terms.CodeExpertsUnavailable, "%v", err)
			e.RetryAfterMs = expertsRetryAfter.Milliseconds()
			return nil, 0, e
		}
		return nil, 0, errFrame(http.StatusBadRequest, terms.CodeGenerationRefused, "%v", err)
	}
	var commitment []byte
	var bound *commitments
	if proofs != nil {
		ps, err := proofs.Finish()
		if err != nil {
			return nil, 0, errFrame(http.StatusInternalServerError, terms.CodeCommitmentFailed, "%v", err)
		}
		h, th := commit.Hash(ps), receipt.TokensHash(ids)
		commitment, bound = commit.Encode(ps), &commitments{proofs: h[:], tokens: th[:]}
	}
	env, err := s.sign(req, offer, sent.String(), len(res.Prompt), res.CachedTokens, len(res.Tokens), experts, res.FinishReason, bound, true)
	if err != nil {
		return nil, 0, errFrame(http.StatusInternalServerError, terms.CodeReceiptFailed, "%v", err)
	}
	if res.FinishReason != FinishStopped {
		s.p.sess.afterTurn(req, eng, gr, req.Continuation+sent.String(), res)
	}
	return &infer.FinalFrame{FinishReason: res.FinishReason, PromptTokens: len(res.Prompt), CompletionTokens: len(res.Tokens),
		Model: offer.Name, Receipt: env, Commitment: commitment, Experts: experts}, res.CachedTokens, nil
}

// commitments are what an optimistic receipt signs about its answer: the
// hash of the logit-commitment proofs and of the token IDs they are of.
type commitments struct {
	proofs, tokens []byte
}

// FinishStopped is the finish reason of an answer the buyer stopped.
const FinishStopped = "stopped"

// sign makes the receipt of one served request. Of its promptTokens,
// cached came from the engine's prefix cache: the units claim them as
// cached_tokens and the rest as input_tokens (router/pricing prices each
// at its own rate; receipt.Cap bounds their sum). experts are the
// holders of a MoE call whose experts ran at holders, as the final frame
// reports them: the receipt claims their expert-tokens (which a gateway
// caps by the model's MoE shape) and signs their hash. bound, on an
// optimistic answer, are the commitments and token IDs it signs. exact
// says the counts are the embedded engine's own (ownPrice). A paid call's
// receipt names the payer and settler of its pay authorization and the
// price the provider is owed, so only that settler's record at no lower
// price settles it on chain.
func (s *inferServer) sign(req *infer.Request, offer gossip.ModelOffer, text string, promptTokens, cached, outputTokens int, experts []infer.ExpertUse, finish string, bound *commitments, exact bool) ([]byte, error) {
	cached = min(max(cached, 0), promptTokens)
	sp, err := receipt.NewSamplingParams(req.Sampling)
	if err != nil {
		return nil, err
	}
	input := receipt.InputCommitment(req.ModelID, req.Chat, req.Messages, req.Prompt, req.Continuation, req.Sampling)
	output := receipt.OutputHash(text)
	expertTokens, ok := infer.ExpertTokensOf(experts)
	if !ok {
		return nil, errors.New("provider: expert-tokens overflow")
	}
	var expertsHash []byte
	if len(experts) > 0 {
		h, err := infer.ExpertsHash(experts)
		if err != nil {
			return nil, err
		}
		expertsHash = h[:]
	}
	m := s.p.d.Identity.MachineID()
	r := &receipt.Receipt{
		ModelID: req.ModelID, Engine: offer.Engine, MachineID: m[:], ProviderPeer: []byte(s.p.d.Host.ID()),
		Nonce: req.Nonce, InputCommitment: input[:], OutputHash: output[:],
		Units: pricing.Units{InputTokens: uint64(promptTokens - cached), CachedTokens: uint64(cached), OutputTokens: uint64(outputTokens),
			ExpertTokens: expertTokens},
		Sampling: sp, FinishReason: finish, TimeMs: s.p.d.Clock.Now().UnixMilli(),
		ExpertsHash: expertsHash,
	}
	if bound != nil {
		r.CommitmentHash, r.TokensHash = bound.proofs, bound.tokens
	}
	if p := req.Pay; p != nil && len(p.Payer) == infer.AccountSize && len(p.Settler) == infer.AccountSize {
		r.Payer, r.Settler = slices.Clone(p.Payer), slices.Clone(p.Settler)
		r.Price = ownPrice(offer, r.Units, exact, finish, req.Continuation)
	}
	sess, err := s.p.d.Session.Current()
	if err != nil {
		return nil, err
	}
	return receipt.Sign(sess, r)
}

// wireLogProbs renders one token's distribution by text for the frame.
func wireLogProbs(eng inference.Engine, t inference.Token, top []inference.LogProb) terms.TokenLogProbs {
	return tokenLogProbs(eng, inference.Token{ID: t.ID, LogProb: t.LogProb, TopK: top})
}

// relayWireLogProbs passes an upstream's log-probs on, at most k
// alternatives each, each text fitted to a frame.
func relayWireLogProbs(in []terms.TokenLogProbs, k int) []terms.TokenLogProbs {
	out := make([]terms.TokenLogProbs, len(in))
	for i, lp := range in {
		t, raw := relayText(lp.Token, lp.Bytes)
		out[i] = terms.TokenLogProbs{Token: t, LogProb: lp.LogProb, Bytes: raw}
		for _, a := range lp.Top[:min(len(lp.Top), k)] {
			at, araw := relayText(a.Token, a.Bytes)
			out[i].Top = append(out[i].Top, terms.TopLogProb{Token: at, LogProb: a.LogProb, Bytes: araw})
		}
	}
	return out
}

// relayText is wireText for an upstream's token, which may come with its
// raw bytes.
func relayText(tok string, b []byte) (string, []byte) {
	t, raw := wireText(tok)
	if b != nil {
		if rb := b[:min(len(b), 256)]; string(rb) != t {
			raw = rb
		}
	}
	return t, raw
}

// pieceText is one token's text as a frame carries it (see wireText).
func pieceText(eng inference.Engine, id int) (string, []byte) {
	return wireText(eng.Detokenize([]int{id}))
}

// wireText makes a token's text fit a frame: valid UTF-8 (a byte-level
// piece may be part of a character), with the raw bytes beside it when
// they differ, and at most 256 bytes of each.
func wireText(s string) (string, []byte) {
	var raw []byte
	if !utf8.ValidString(s) {
		raw = []byte(s[:min(len(s), 256)])
		s = inference.ValidText(s)
	}
	for len(s) > 256 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s, raw
}

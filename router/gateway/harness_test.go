package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// The gateway alone: real table, breakers, trackers, strategy, receipts
// (software-key machines signing with real sessions) and store; only the
// network is scripted. Tests run in a testing/synctest bubble, so every
// delay is exact virtual time.

var (
	modelID   = bytes.Repeat([]byte{0x4d}, 32)
	modelName = "tiny"
)

// script is how one scripted provider answers a call.
type script struct {
	first  time.Duration // before the first token (or the error)
	gap    time.Duration // between tokens
	tokens []string      // the answer, one token frame each
	// cutAt > 0 breaks the stream (no final frame) after that many tokens.
	cutAt int
	// fail, if set, is returned before any token.
	fail error
	// claim overrides the output tokens the receipt claims.
	claim uint64
	// forge signs a receipt over other text.
	forge bool
	// extraOnStop is text the provider generated past the stop, signed
	// for but never sent.
	extraOnStop string
	// continueUnsupported refuses continuations.
	continueUnsupported bool
	// experts is the expert-tokens the receipt claims, holders the final
	// frame's expert holders.
	experts uint64
	holders []infer.ExpertUse
	// unsignedHolders leaves the holders out of the receipt.
	unsignedHolders bool
}

// call is one Call the transport saw.
type call struct {
	peer      peer.ID
	req       *infer.Request
	start     time.Time
	cfg       infer.ClientConfig
	cancelled bool // ended because ctx was done
	stopped   bool // ended by ErrStop
	timedOut  bool // ended by cfg.FirstTokenTimeout
}

// fakeProvider is one machine behind the scripted transport.
type fakeProvider struct {
	id     peer.ID
	key    crypto.PrivKey // id's libp2p key, for a test that gives it a host
	ident  *identity.Identity
	sess   *identity.Session
	script func(n int, req *infer.Request) script // n: this provider's call number, from 0
}

type transport struct {
	mu    sync.Mutex
	provs map[peer.ID]*fakeProvider
	calls []*call
	n     map[peer.ID]int
	// dropOnStop behaves like a transport without stop support: the
	// onToken error resets the stream and no final frame comes back.
	dropOnStop bool
	// hangOnStop ignores the stop: the provider goes silent until the
	// call's context ends.
	hangOnStop bool
	// answered, if set, runs when a call has sent its whole answer.
	answered func(p peer.ID, req *infer.Request)
}

func (tr *transport) Call(ctx context.Context, p peer.ID, req *infer.Request, cfg infer.ClientConfig, onToken func(*infer.TokenFrame) error) (*infer.FinalFrame, infer.WireStats, error) {
	var st infer.WireStats
	if err := req.Validate(); err != nil {
		return nil, st, err
	}
	tr.mu.Lock()
	fp := tr.provs[p]
	n := tr.n[p]
	tr.n[p]++
	c := &call{peer: p, req: req, start: time.Now(), cfg: cfg}
	tr.calls = append(tr.calls, c)
	tr.mu.Unlock()
	sc := fp.script(n, req)
	st.BytesSent = 4096
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			tr.mu.Lock()
			c.cancelled = true
			tr.mu.Unlock()
			return ctx.Err()
		}
	}
	if ft := cfg.FirstTokenTimeout; ft > 0 && sc.first >= ft {
		// The provider is silent past the bound: as infer.Call, give up.
		if err := wait(ft); err != nil {
			return nil, st, err
		}
		tr.mu.Lock()
		c.timedOut = true
		tr.mu.Unlock()
		return nil, st, fmt.Errorf("transport: %w after %s", infer.ErrFirstTokenTimeout, ft)
	}
	if err := wait(sc.first); err != nil {
		return nil, st, err
	}
	if sc.fail != nil {
		return nil, st, sc.fail
	}
	if sc.continueUnsupported && req.Continuation != "" {
		return nil, st, &infer.ErrorFrame{Status: 400, Code: terms.CodeContinuationUnsupported}
	}
	var text strings.Builder
	for i, tok := range sc.tokens {
		if i > 0 {
			if err := wait(sc.gap); err != nil {
				return nil, st, err
			}
		}
		if sc.cutAt > 0 && i == sc.cutAt {
			return nil, st, fmt.Errorf("%w: stream reset", infer.ErrNoFinal)
		}
		st.BytesReceived += int64(len(tok)) + 16
		text.WriteString(tok)
		if err := onToken(&infer.TokenFrame{Text: tok, TokenIDs: []int{1000 + i}}); err != nil {
			if !errors.Is(err, ErrStop) {
				return nil, st, err
			}
			tr.mu.Lock()
			c.stopped = true
			drop, hang := tr.dropOnStop, tr.hangOnStop
			tr.mu.Unlock()
			if drop {
				return nil, st, err
			}
			if hang {
				<-ctx.Done()
				return nil, st, ctx.Err()
			}
			text.WriteString(sc.extraOnStop)
			f := fp.final(req, text.String(), uint64(i+1+len(sc.extraOnStop)), sc)
			st.BytesReceived += int64(len(f.Receipt))
			return f, st, fmt.Errorf("transport: stopped: %w", err)
		}
	}
	f := fp.final(req, text.String(), uint64(len(sc.tokens)), sc)
	st.BytesReceived += int64(len(f.Receipt))
	if tr.answered != nil {
		tr.answered(p, req)
	}
	return f, st, nil
}

// final signs a receipt for text.
func (fp *fakeProvider) final(req *infer.Request, text string, outTokens uint64, sc script) *infer.FinalFrame {
	if sc.claim != 0 {
		outTokens = sc.claim
	}
	signed := text
	if sc.forge {
		signed = text + " (and more)"
	}
	in := receipt.InputCommitment(req.ModelID, req.Chat, req.Messages, req.Prompt, req.Continuation, req.Sampling)
	out := receipt.OutputHash(signed)
	sp, err := receipt.NewSamplingParams(req.Sampling)
	if err != nil {
		panic(err)
	}
	m := fp.ident.MachineID()
	var expertsHash []byte
	if len(sc.holders) > 0 {
		h, err := infer.ExpertsHash(sc.holders)
		if err != nil {
			panic(err)
		}
		expertsHash = h[:]
		if sc.unsignedHolders {
			expertsHash = nil
		}
	}
	r := &receipt.Receipt{ModelID: req.ModelID, Engine: "embedded", MachineID: m[:], ProviderPeer: []byte(fp.id), ExpertsHash: expertsHash,
		Nonce: req.Nonce, InputCommitment: in[:], OutputHash: out[:],
		Units:    terms.Units{InputTokens: 5, OutputTokens: outTokens, ExpertTokens: sc.experts},
		Sampling: sp, FinishReason: inference.FinishStop, TimeMs: time.Now().UnixMilli()}
	env, err := receipt.Sign(fp.sess, r)
	if err != nil {
		panic(err)
	}
	return &infer.FinalFrame{FinishReason: inference.FinishStop, PromptTokens: 5, CompletionTokens: int(outTokens), Receipt: env, Experts: sc.holders}
}

// market is a gateway over scripted providers.
type market struct {
	t     testing.TB
	gw    *Gateway
	tr    *transport
	table *router.Table
	st    *bubbleLedger
	provs []*fakeProvider
	paid  []Call
	mu    sync.Mutex
}

// rates: provider i's output price, so the ranking is by index (cheapest
// first) when the strategy is "price".
func newMarket(t testing.TB, st *bubbleLedger, n int, cfg Config, scripts ...func(n int, req *infer.Request) script) *market {
	t.Helper()
	m := &market{t: t, tr: &transport{provs: map[peer.ID]*fakeProvider{}, n: map[peer.ID]int{}}, table: router.NewTable(nil, nil), st: st}
	for i := 0; i < n; i++ {
		pm := identitytest.NewMachine(t, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
		fp := &fakeProvider{id: pm.Peer, key: pm.Key, ident: pm.ID, sess: pm.Session, script: scripts[min(i, len(scripts)-1)]}
		m.provs = append(m.provs, fp)
		m.tr.provs[pm.Peer] = fp
		m.announce(fp, uint64(10+i), modelID, modelName)
	}
	gw, err := New(cfg, Deps{Transport: m.tr, Table: m.table, Ledger: st, OnCall: func(c Call) {
		m.mu.Lock()
		m.paid = append(m.paid, c)
		m.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	m.gw = gw
	return m
}

// announce makes fp offer a model at an output price, warm and up.
func (m *market) announce(fp *fakeProvider, outPrice uint64, id []byte, name string) {
	m.announceOffer(fp, gossip.ModelOffer{ModelID: id, Name: name,
		RateCard: terms.RateCard{InputTokens: 1, OutputTokens: outPrice}, Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}})
}

// announceOffer makes fp offer o, warm and up.
func (m *market) announceOffer(fp *fakeProvider, o gossip.ModelOffer) {
	mach := fp.ident.MachineID()
	s := gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()}
	m.table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: s, Announcement: gossip.Announcement{MachineID: mach[:],
		Region: "DE", Models: []gossip.ModelOffer{o}}})
	m.beat()
}

// beat sends every provider's heartbeat: up, every model warm.
func (m *market) beat() {
	for _, fp := range m.provs {
		mach := fp.ident.MachineID()
		m.table.ApplyHeartbeat(&gossip.VerifiedHeartbeat{
			Sender: gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()},
			Heartbeat: gossip.Heartbeat{MachineID: mach[:], Seq: uint64(time.Now().UnixNano()), Capacity: 8,
				Models: []gossip.ModelStatus{{ModelID: modelID, State: gossip.StateWarm}, {ModelID: otherID, State: gossip.StateWarm}}}})
	}
}

var otherID = bytes.Repeat([]byte{0x6f}, 32)

// calls returns the calls made so far.
func (m *market) calls() []*call {
	m.tr.mu.Lock()
	defer m.tr.mu.Unlock()
	out := make([]*call, len(m.tr.calls))
	for i, c := range m.tr.calls {
		cc := *c
		out[i] = &cc
	}
	return out
}

func (m *market) reports() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.paid...)
}

// request is a small chat request by the price strategy (provider 0 first).
func request() *Request {
	return &Request{Model: modelName, Chat: true, Messages: []inference.Message{{Role: "user", Content: "hi"}},
		Sampling: inference.Sampling{MaxTokens: 16}, Strategy: "price", Verification: terms.VerifyNone, Payer: "alice"}
}

// answer is a script serving the given tokens after first.
func answer(first time.Duration, tokens ...string) func(int, *infer.Request) script {
	return func(int, *infer.Request) script { return script{first: first, gap: time.Millisecond, tokens: tokens} }
}

// bubbleLedger is a real store run outside the test's synctest bubble: pebble's
// goroutines and pools must not belong to a bubble, so every call goes to
// one goroutine outside over channels made outside.
type bubbleLedger struct {
	st   *store.Store
	mu   sync.Mutex
	req  chan func()
	done chan struct{}
}

func (l *bubbleLedger) do(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.req <- f
	<-l.done
}

func (l *bubbleLedger) Balance(a string) (b uint64, err error) {
	l.do(func() { b, err = l.st.Balance(a) })
	return b, err
}

func (l *bubbleLedger) SettleWithReceipt(rec *receipt.Bill, nonce, env []byte, meta store.ReceiptMeta) (err error) {
	l.do(func() { err = l.st.SettleWithReceipt(rec, nonce, env, meta) })
	return err
}

func (l *bubbleLedger) WaitDurable(ctx context.Context) (err error) {
	l.do(func() { err = l.st.WaitDurable(ctx) })
	return err
}

func (l *bubbleLedger) PutReceipt(nonce, env []byte, meta store.ReceiptMeta) (err error) {
	l.do(func() { err = l.st.PutReceipt(nonce, env, meta) })
	return err
}

func (l *bubbleLedger) ListPayments(a string, n int) (ps []*receipt.Bill, err error) {
	l.do(func() { ps, err = l.st.ListPayments(a, n) })
	return ps, err
}

// openStore opens a real store with a funded buyer. Call it outside the
// synctest bubble.
func openStore(t testing.TB) *bubbleLedger {
	t.Helper()
	st, err := store.OpenWith(t.TempDir(), store.GroupSync)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"alice", "bob"} {
		if err := st.Credit(a, 1_000_000); err != nil {
			t.Fatal(err)
		}
	}
	l := &bubbleLedger{st: st, req: make(chan func()), done: make(chan struct{})}
	go func() {
		for f := range l.req {
			f()
			l.done <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		close(l.req)
		st.Close()
	})
	return l
}

// inBubble runs body in a synctest bubble over a fresh store (openStore),
// opened outside the bubble: the store's goroutines must not be part of it.
func inBubble(t *testing.T, body func(t *testing.T, st *bubbleLedger)) {
	t.Helper()
	st := openStore(t)
	synctest.Test(t, func(t *testing.T) { body(t, st) })
}

func testConfig() Config {
	c := DefaultConfig()
	// The scripted transport enforces first_token_timeout when set (not
	// stall_timeout); off here, a test sets it to see it applied.
	c.FirstTokenTimeout, c.StallTimeout = 0, 0
	return c
}

func balance(t *testing.T, st *bubbleLedger) uint64 {
	t.Helper()
	b, err := st.Balance("alice")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

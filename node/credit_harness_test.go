package node

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// creditNet is one validator (a gateway, probes off), providers on its
// chain that wait creditRecordWait for an owed record, and a payer
// account funded at genesis that opens escrows by transaction.
type creditNet struct {
	net     *chainNet
	gw      *Node
	provs   []*Node
	chain   *consensus.Node
	chainID string
	modelID []byte
	payer   ed25519.PrivateKey
	sub     *consensus.Submitter // the payer's
}

const (
	creditRecordWait = 200 * time.Millisecond
	creditPayerFunds = 10_000_000
)

// newCreditNet starts the network; trusted peers are served unpaid by
// every provider.
func newCreditNet(t *testing.T, np int, params ledger.Params, trusted []peer.ID, valOpts ...func(*Config)) *creditNet {
	t.Helper()
	return newCreditNetPaying(t, newAccountKey(t), np, params, trusted, valOpts...)
}

// newCreditNetPaying is newCreditNet with the payer's key given.
func newCreditNetPaying(t *testing.T, payer ed25519.PrivateKey, np int, params ledger.Params, trusted []peer.ID, valOpts ...func(*Config)) *creditNet {
	t.Helper()
	c := &creditNet{payer: payer}
	extra := chainExtra{funded: map[terms.AccountID]uint64{keyAccount(c.payer): creditPayerFunds},
		provOpts: []func(*Config){func(cfg *Config) {
			cfg.Provider.RecordWait = creditRecordWait
			for _, p := range trusted {
				cfg.Provider.TrustedCallers = append(cfg.Provider.TrustedCallers, p.String())
			}
		}}}
	opts := append([]func(*Config){func(cfg *Config) { cfg.Router.ProbeInterval = 0 }}, valOpts...)
	c.net = newChainNetWith(t, 1, np, 0, params, extra, opts...)
	c.gw, c.provs, c.chain = c.net.validators[0], c.net.registered, c.net.validators[0].Chain()
	c.chainID = c.chain.App().ChainID()
	for _, p := range c.provs {
		nodetest.Eventually(t, 60*time.Second, "the provider's registration to commit", func() bool {
			_, ok, _ := c.chain.Provider(t.Context(), p.Identity().MachineID())
			return ok
		})
	}
	id, err := hex.DecodeString(c.provs[0].Config().Provider.Models[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	c.modelID = id
	if c.sub, err = consensus.NewSubmitter(c.chain, c.payer, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func newAccountKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyAccount(k ed25519.PrivateKey) terms.AccountID {
	return terms.AccountOf(k.Public().(ed25519.PublicKey))
}

func (c *creditNet) payerID() terms.AccountID { return keyAccount(c.payer) }

// submit sends one transaction from the payer and waits for its commit
// and for every provider's chain to have its block (credit control reads
// a provider's own copy of the chain).
func (c *creditNet) submit(t *testing.T, payload any) {
	t.Helper()
	res, err := c.sub.Submit(t.Context(), payload)
	if err != nil || res.Code != 0 {
		t.Fatalf("submit %T: %+v, %v", payload, res, err)
	}
	c.synced(t, res.Height)
}

// synced waits until every provider's chain reached height h.
func (c *creditNet) synced(t *testing.T, h int64) {
	t.Helper()
	for _, p := range c.provs {
		nodetest.Eventually(t, 10*time.Second, "the provider's chain to catch up", func() bool { return p.Chain().App().Height() >= h })
	}
}

func (c *creditNet) escrow(t *testing.T, settler terms.AccountID) ledger.Escrow {
	t.Helper()
	e, ok, err := c.chain.Escrow(t.Context(), c.payerID(), settler)
	if err != nil || !ok {
		t.Fatalf("escrow of %s with %s: ok %v, %v", c.payerID(), settler, ok, err)
	}
	return e
}

// newRogueHost is a libp2p host of the test's own, outside any node, on
// the test network; tune sets what else it needs (bootstrap, DHT server).
func newRogueHost(t *testing.T, tune ...func(*p2p.Config)) *p2p.Host {
	t.Helper()
	pc := p2p.DefaultConfig()
	pc.Network = "test"
	pc.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	pc.KeyFile = t.TempDir() + "/p2p.key"
	for _, f := range tune {
		f(&pc)
	}
	h, err := p2p.New(t.Context(), pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	return h
}

// payAuth is settlerKey's authorization of caller for payer.
func (c *creditNet) payAuth(settlerKey ed25519.PrivateKey, caller peer.ID, payer terms.AccountID) *infer.PayAuth {
	settler := keyAccount(settlerKey)
	return &infer.PayAuth{Payer: payer[:], Settler: settler[:], Sig: ledger.SignPayAuth(settlerKey, c.chainID, []byte(caller), payer)}
}

// request is a small chat request for the devnet model at level receipt.
func (c *creditNet) request(pay *infer.PayAuth, content string, maxTokens int) *infer.Request {
	nonce := make([]byte, infer.NonceSize)
	_, _ = rand.Read(nonce)
	return &infer.Request{Nonce: nonce, ModelID: c.modelID, Model: DevnetModelName, Chat: true,
		Messages: []terms.Message{{Role: "user", Content: content}}, Sampling: terms.Sampling{MaxTokens: maxTokens},
		Verification: terms.VerifyReceipt, Pay: pay}
}

// call sends req from h to provider p over /tenzro/infer/1.0.0.
func (c *creditNet) call(t *testing.T, h *p2p.Host, p *Node, req *infer.Request) (*infer.FinalFrame, error) {
	t.Helper()
	info, err := peer.AddrInfoFromString(p.Host().Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.Host().Connect(ctx, *info); err != nil {
		t.Fatal(err)
	}
	f, _, err := gateway.HostTransport(h.Host(), "test").Call(ctx, p.Host().ID(), req,
		infer.ClientConfig{FirstTokenTimeout: 20 * time.Second, StallTimeout: 10 * time.Second}, func(*infer.TokenFrame) error { return nil })
	return f, err
}

// served calls and requires an answer with a receipt; it returns once the
// provider counts the call as owed.
func (c *creditNet) served(t *testing.T, h *p2p.Host, p *Node, req *infer.Request) *infer.FinalFrame {
	t.Helper()
	f, err := c.call(t, h, p, req)
	if err != nil || f == nil || len(f.Receipt) == 0 {
		t.Fatalf("call to %s: final %+v, %v", p.Host().ID(), f, err)
	}
	if req.Pay != nil {
		rd := requestDigest(req)
		nodetest.Eventually(t, 5*time.Second, "the provider to count the call as owed", func() bool {
			_, ok := p.Provider().Expected(rd)
			return ok
		})
	}
	return f
}

// refused requires err to be the provider's refusal with status and code.
func refused(t *testing.T, what string, f *infer.FinalFrame, err error, status int, code string) *infer.ErrorFrame {
	t.Helper()
	var ef *infer.ErrorFrame
	if !errors.As(err, &ef) || ef.Status != status || ef.Code != code {
		t.Fatalf("%s: final %v, err %v; want %d %s", what, f != nil, err, status, code)
	}
	return ef
}

func requestDigest(req *infer.Request) terms.Hash32 {
	in := receipt.InputCommitment(req.ModelID, req.Chat, req.Messages, req.Prompt, req.Continuation, req.Sampling)
	return terms.Hash32(receipt.RequestDigest(req.Nonce, in, req.ModelID))
}

// record is the payment record an honest settler signs for the call req
// that p answered with f: p's own rate card on the receipt's units.
func (c *creditNet) record(t *testing.T, settlerKey ed25519.PrivateKey, p *Node, req *infer.Request, f *infer.FinalFrame) receipt.PaymentRecord {
	t.Helper()
	_, r, err := receipt.Parse(f.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	bd, err := pricing.Price(p.Config().Provider.Models[0].RateCard, r.Units, terms.VerifyNone, pricing.Surcharges{})
	if err != nil {
		t.Fatal(err)
	}
	rec := receipt.PaymentRecord{Payer: terms.AccountID(req.Pay.Payer), Provider: p.Identity().MachineID(),
		RequestDigest: requestDigest(req), Price: bd.Total, ReceiptHash: terms.Hash32(receipt.ReceiptHash(f.Receipt)),
		Receipt: f.Receipt, Units: r.Units.InputTokens + r.Units.OutputTokens, Time: time.Now().Unix(),
		ExpiryHeight: c.chain.App().Height() + 100}
	c.sign(t, settlerKey, &rec)
	return rec
}

func (c *creditNet) sign(t *testing.T, key ed25519.PrivateKey, rec *receipt.PaymentRecord) {
	t.Helper()
	if err := receipt.SignRecord(key, c.chainID, rec); err != nil {
		t.Fatal(err)
	}
}

// deliver sends recs from h to p over /tenzro/payment/1.0.0.
func (c *creditNet) deliver(t *testing.T, h *p2p.Host, p *Node, recs ...receipt.PaymentRecord) []payment.Result {
	t.Helper()
	res, err := payment.Deliver(t.Context(), h.Host(), "test", p.Host().ID(), recs)
	if err != nil {
		t.Fatalf("deliver: %v", err)
	}
	return res
}

// worstCase is what the provider's credit control bounds req by: every
// input byte a token and max_tokens out, at its rate card.
func worstCase(t *testing.T, p *Node, req *infer.Request) uint64 {
	t.Helper()
	in := uint64(0)
	for _, m := range req.Messages {
		in += uint64(len(m.Role) + len(m.Content))
	}
	bd, err := pricing.Price(p.Config().Provider.Models[0].RateCard, pricing.Units{InputTokens: in, OutputTokens: uint64(req.Sampling.MaxTokens)},
		terms.VerifyNone, pricing.Surcharges{})
	if err != nil {
		t.Fatal(err)
	}
	return bd.Total
}

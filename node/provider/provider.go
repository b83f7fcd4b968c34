package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/lifecycle"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Submitter signs and submits the operator account's transactions and
// waits for them to commit.
type Submitter interface {
	Submit(ctx context.Context, payload any) (consensus.TxResult, error)
	Account() terms.AccountID
}

// Deps are what the provider role runs on; the node builds them.
type Deps struct {
	Log      *slog.Logger
	Clock    clock.Clock
	Identity *identity.Identity
	Session  *identity.SessionKeeper
	Host     *p2p.Host
	Gossip   *gossip.Service
	// Path resolves a configured path against the node's home.
	Path func(string) string
	// Network scopes the infer protocol: requests naming another network
	// are refused.
	Network string
	// Registered reports whether a peer is a provider registered on chain
	// (a known caller, like TrustedCallers); nil without a chain.
	Registered func(peer.ID) bool

	// Chain, Account and ForgetPin register the provider on chain; with a
	// nil Chain the provider runs unregistered.
	Chain   *consensus.Node
	Account Submitter
	// Payments and Escrow, with a chain, turn on credit control: calls
	// are paid by a settler's signed records (see credit); the node gives
	// the collector of those records and a chain read of escrows.
	Payments Payments
	Escrow   EscrowFunc
	// ForgetPin drops the gossip pin of a peer once its registration
	// commits, so the chain's record is read afresh.
	ForgetPin func(peer.ID)
	// ExpertPayments, with a chain, pays the expert holders of served
	// models running remote experts (nil: holders are not paid).
	ExpertPayments ExpertPayments
	// Registerer takes the role's metrics (a private registry when nil).
	Registerer prometheus.Registerer
	// Attest is the node's [attest] policy, which the provider's own
	// attestation must pass before it is announced; Quotes, when set,
	// replaces the SEV-SNP device (tests).
	Attest *attest.Policy
	Quotes QuoteProvider
	// ExpertFault, if set, alters the rows this holder computes before it
	// signs them (tests: a holder with other weights under the model's ID).
	ExpertFault ExpertFault
}

// ExpertFault alters the output rows of one expert's batch in place.
type ExpertFault func(model [32]byte, layer, expert int, rows [][]float32)

// Provider is the provider role: it serves its models over
// /tenzro/infer/1.0.0 and its own OpenAI routes, announces them and
// heartbeats, and registers its machine on chain.
type Provider struct {
	cfg    Config
	d      Deps
	models *modelSet
	loop   *providerLoop
	server *inferServer
	sess   *sessions
	holder *expertHolder  // nil without [[provider.experts]]
	remote *remoteExperts // nil without [provider.remote_experts] models
	attest *attestor      // nil without [provider.attestation]
	parts  []lifecycle.Part
}

// New assembles the role; nothing runs until Start.
func New(cfg Config, d Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Host == nil || d.Gossip == nil || d.Identity == nil || d.Session == nil {
		return nil, errors.New("provider: host, gossip, identity and session are required")
	}
	if d.Chain != nil && (d.Account == nil || d.ForgetPin == nil) {
		return nil, errors.New("provider: a chain needs an account and a pin to forget")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	if d.Path == nil {
		d.Path = func(p string) string { return p }
	}
	p := &Provider{cfg: cfg, d: d}
	src, err := newSource(cfg.Attestation, d.Path, d.Quotes)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	p.attest = newAttestor(src, d.Attest, d.Clock, d.Log)
	if len(cfg.RemoteExperts.Models) > 0 {
		p.remote = newRemoteExperts(p)
	}
	if p.models, err = newModelSet(cfg, d.Path, d.Log, p.remote); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	p.loop = newProviderLoop(p, p.models)
	p.server = &inferServer{p: p, set: p.models}
	if p.sess, err = newSessions(p); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	p.parts = []lifecycle.Part{p.loop, p.sess}
	if p.remote != nil {
		// Stopped after the server: calls finishing then still pay.
		p.parts = append(p.parts, p.remote)
	}
	p.parts = append(p.parts, p.server)
	if len(cfg.Experts) > 0 {
		if p.holder, err = newExpertHolder(p); err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
		p.parts = append(p.parts, p.holder)
	}
	if d.Chain != nil {
		p.parts = append(p.parts, newRegistrar(p))
	}
	return p, nil
}

// Start starts announcing, serving and registering.
func (p *Provider) Start(ctx context.Context) error {
	if p.attest != nil {
		sess, err := p.d.Session.Current()
		if err == nil {
			err = p.attest.start(sess)
		}
		if err != nil {
			return err
		}
	}
	return lifecycle.Start(ctx, "provider", p.parts)
}

// Stop stops the role's parts in reverse order.
func (p *Provider) Stop(ctx context.Context) error {
	return lifecycle.Stop(ctx, "provider", p.parts)
}

// ApplyAnnouncement takes a verified announcement into the table of
// expert holders (a no-op unless a served model runs remote experts).
func (p *Provider) ApplyAnnouncement(a *gossip.VerifiedAnnouncement) { p.remote.apply(a) }

// Backend is the provider's own OpenAI routes: its models, served here.
func (p *Provider) Backend() openai.Backend { return localBackend{set: p.models} }

// Warm reports whether every configured model is loaded and serving.
func (p *Provider) Warm() bool {
	for _, m := range p.models.models {
		if _, st, _ := m.snapshot(); st != gossip.StateWarm {
			return false
		}
	}
	return true
}

// Recorded tells credit control that a payment record for a call it
// served is held (the collector persisted it): its settler owes one
// record less.
func (p *Provider) Recorded(rec *receipt.PaymentRecord) {
	if c := p.server.credit.Load(); c != nil {
		c.recorded(rec)
	}
}

// Issued is the hash of the receipt the provider signed for the call
// behind request digest rd, if it served it since starting.
func (p *Provider) Issued(rd terms.Hash32) (terms.Hash32, bool) {
	if c := p.server.credit.Load(); c != nil {
		return c.issuedReceipt(rd)
	}
	return terms.Hash32{}, false
}

// Expected is the provider's own price of the call behind request digest
// rd, if it served it since starting: what a record for it should pay at
// least.
func (p *Provider) Expected(rd terms.Hash32) (uint64, bool) {
	if c := p.server.credit.Load(); c != nil {
		return c.expected(rd)
	}
	return 0, false
}

// Attested is what the attestation this provider announces proves under
// its own [attest] policy; nil when it announces none.
func (p *Provider) Attested() *attest.Result { return p.attest.attested() }

package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/chainview"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/otlp"
)

// buildProvider assembles the provider role from the parts built so far.
func (n *Node) buildProvider(acct *consensus.Submitter) error {
	d := provider.Deps{Log: n.log, Clock: n.clock, Identity: n.id, Session: n.session, Host: n.host,
		Gossip: n.gossip, Path: n.cfg.Path, Network: n.cfg.Network, Registerer: n.reg, Attest: n.attest, Quotes: n.quotes,
		ExpertFault: n.expertFault}
	var collector *settle.Collector
	if n.chain != nil {
		d.Chain, d.Account, d.ForgetPin = n.chain, acct, n.registry.Pins().Forget
		d.Registered = func(p peer.ID) bool { _, ok := n.registry.Registered(p); return ok }
		var err error
		collector, err = settle.OpenCollector(n.cfg.settleCollector(),
			settle.CollectorDeps{Machine: n.id.MachineID(), Chain: settle.NodeChain(n.chain), Submitter: acct,
				Expect: func(rd terms.Hash32) (uint64, bool) { return n.provider.Expected(rd) },
				Clock:  n.clock, Log: n.log, Registerer: n.reg})
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		n.parts = append(n.parts, collector)
		d.Payments, d.Escrow = collector, provider.ChainEscrow(n.chain)
		if len(n.cfg.Provider.RemoteExperts.Models) > 0 {
			if d.ExpertPayments, err = n.expertOutbox(acct); err != nil {
				return err
			}
		}
	}
	var err error
	if n.provider, err = provider.New(n.cfg.Provider, d); err != nil {
		return err
	}
	n.parts = append(n.parts, n.provider)
	// The provider's table of expert holders learns from the same
	// verified announcements as the router's table.
	prov := n.provider
	n.gossip.OnAnnouncement(func(a *gossip.VerifiedAnnouncement) {
		n.table.ApplyAnnouncement(a)
		prov.ApplyAnnouncement(a)
	})
	if collector != nil {
		srv, err := payment.NewServer(n.host.Host(), payment.ServerConfig{Network: n.cfg.Network, Registerer: n.reg},
			provider.NewRecordSink(collector, n.provider, n.id.MachineID(), n.host.ID(), n.clock), n.log)
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		n.parts = append(n.parts, paymentServer{srv})
	}
	return nil
}

// paymentServer gives the payment protocol's server the node's lifecycle.
type paymentServer struct{ s *payment.Server }

func (p paymentServer) Start(context.Context) error { return p.s.Start() }
func (p paymentServer) Stop(context.Context) error  { p.s.Stop(); return nil }

// buildGateway assembles the routing side of every other role: the
// gateway and, on a chain validator, the validator role that measures
// what the gateway routes.
func (n *Node) buildGateway(acct *consensus.Submitter) error {
	if err := n.cfg.Router.CreditBuyers(n.store); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	toks, err := loadTokenizers(n.cfg)
	if err != nil {
		return err
	}
	warm := infer.NewWarm(n.host.Dialer())
	n.parts = append(n.parts, warm) // stopping resets the idle streams
	// A provider whose connection closes is tried last at once, before its heartbeats lapse.
	n.parts = append(n.parts, router.NewConnWatch(n.host.Dialer().Network(), n.table))
	deps := gateway.Deps{Transport: gateway.WarmHostTransport(n.host.Dialer(), n.cfg.Network, warm), Table: n.table,
		Ledger: n.store, Clock: n.clock, Log: n.log, Registerer: n.reg, Tokenizers: toks}
	if n.cfg.Telemetry.Enabled() {
		// Every span's resource names the node: its peer ID, role and network.
		res := otlp.Export{Instance: n.host.ID().String(), Version: Version, Role: string(n.cfg.Role), Network: n.cfg.Network}
		if n.telemetry, err = n.cfg.Telemetry.Open(n.life, res); err != nil {
			return fmt.Errorf("node: %w", err)
		}
		deps.Tracer = n.telemetry.Provider()
	}
	var probePayer string
	if n.chain != nil {
		deps.Names = chainview.NewNames(n.chain)
		deps.Surcharges = chainview.NewSurcharges(n.chain)
		deps.Operators, deps.Streams = chainview.Operators{R: n.registry}, chainview.Streams{Account: acct}
		outbox, err := settle.OpenOutbox(n.cfg.settleOutbox(),
			settle.OutboxDeps{Key: n.accountKey, Chain: settle.NodeChain(n.chain), Submitter: acct, Deliver: deliverFunc(n),
				Clock: n.clock, Log: n.log, Registerer: n.reg})
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		n.parts = append(n.parts, outbox)
		n.outbox = outbox
		n.payments = chainview.NewPayments(n.chain, outbox, n.accountKey, n.host.ID(), n.clock)
		deps.Payments = n.payments
		probePayer = terms.AccountOf(n.accountKey.Public().(ed25519.PublicKey)).String()
	}
	isValidator := n.chain != nil && n.cfg.Chain.Role == consensus.ChainValidator
	if isValidator {
		// The validator role reports every call; it is built once the
		// gateway it probes through exists, before anything runs.
		deps.OnCall = func(c gateway.Call) { n.validator.OnCall(c) }
	}
	deps.Successors = gateway.CacheSuccessors(n.host.Dialer())
	// The session table outlives a restart: sessions continue with their successors and streams.
	if deps.SessionStore, err = sessioncache.OpenDirStore(n.cfg.Path(filepath.Join("data", "sessions"))); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	gateway.LogSurchargeSource(n.log, n.chain != nil, n.cfg.Router.Surcharges)
	if n.gateway, err = gateway.New(n.cfg.Router.GatewayConfig(), deps); err != nil {
		return err
	}
	n.parts = append(n.parts, gateway.NewSessionSweeper(n.gateway, n.clock))
	// Keys made at run time, with their budgets' spend, outlive a restart.
	if n.keys, err = buyerkeys.Open(n.cfg.Path(filepath.Join("data", "buyerkeys")), n.clock); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n.parts = append(n.parts, n.keys)
	if !isValidator {
		return nil
	}
	d := validator.Deps{Log: n.log, Clock: n.clock, Session: n.session, Gossip: n.gossip, Chain: n.chain,
		Account: acct, AccountKey: n.accountKey, Registry: n.registry, Table: n.table, Gateway: n.gateway, Store: n.store, Metrics: n.reg}
	vc := validator.Config{ProbeInterval: n.cfg.Router.ProbeInterval, ProbePayer: probePayer,
		HeldModels: n.cfg.Validator.Models, ModelPath: n.cfg.Path, VotesPath: n.cfg.Path(DisputeVotesFile)}
	if n.validator, err = validator.New(vc, d); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n.parts = append(n.parts, n.validator)
	return nil
}

// loadTokenizers opens every configured tokenizer, checking each model
// directory against its ID.
func loadTokenizers(cfg Config) (map[inference.ModelID]gateway.TokenCounter, error) {
	out := map[inference.ModelID]gateway.TokenCounter{}
	for i, tc := range cfg.Router.Tokenizers {
		h, err := catalog.ParseHash(tc.ID)
		if err != nil {
			return nil, fmt.Errorf("node: router.tokenizers[%d]: id: %w", i, err)
		}
		pt, err := llm.OpenTokenizer(cfg.Path(tc.Dir), inference.ModelID(h))
		if err != nil {
			return nil, fmt.Errorf("node: router.tokenizers[%d]: %w", i, err)
		}
		out[pt.ModelID()] = pt
	}
	return out, nil
}

// ExpectDeposit tells a gateway on a chain that a deposit of amount into
// payer's escrow with it is on its way (chainview.Payments.ExpectDeposit).
// Without a chain it does nothing.
func (n *Node) ExpectDeposit(payer terms.AccountID, amount uint64) (done func()) {
	if n.payments == nil {
		return func() {}
	}
	return n.payments.ExpectDeposit(payer, amount)
}

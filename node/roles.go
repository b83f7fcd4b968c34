package node

import (
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// buildProvider assembles the provider role from the parts built so far.
func (n *Node) buildProvider(acct *consensus.Submitter) error {
	d := provider.Deps{Log: n.log, Clock: n.clock, Identity: n.id, Session: n.session, Host: n.host,
		Gossip: n.gossip, Path: n.cfg.Path, Network: n.cfg.Network}
	if n.chain != nil {
		d.Chain, d.Account, d.ForgetPin = n.chain, acct, n.registry.pins.Forget
		d.Registered = func(p peer.ID) bool { _, ok := n.registry.Registered(p); return ok }
	}
	var err error
	if n.provider, err = provider.New(n.cfg.Provider, d); err != nil {
		return err
	}
	n.parts = append(n.parts, n.provider)
	return nil
}

// buildGateway assembles the routing side of every other role: the
// gateway and, on a chain validator, the validator role that measures
// what the gateway routes.
func (n *Node) buildGateway(acct *consensus.Submitter) error {
	if err := creditBuyers(n.store, n.cfg.Router.Buyers); err != nil {
		return err
	}
	toks, err := loadTokenizers(n.cfg)
	if err != nil {
		return err
	}
	deps := gateway.Deps{Transport: gateway.HostTransport(n.host.Host(), n.cfg.Network), Table: n.table,
		Ledger: n.store, Clock: n.clock, Log: n.log, Registerer: n.reg, Tokenizers: toks}
	if n.chain != nil {
		deps.Names = chainNames{n.chain}
	}
	isValidator := n.chain != nil && n.cfg.Chain.Role == ChainValidator
	if isValidator {
		// The validator role reports every call; it is built once the
		// gateway it probes through exists, before anything runs.
		deps.OnCall = func(c gateway.Call) { n.validator.OnCall(c) }
	}
	if n.gateway, err = gateway.New(gatewayConfig(n.cfg.Router), deps); err != nil {
		return err
	}
	if !isValidator {
		return nil
	}
	key, err := consensus.LoadOrCreateAccountKey(n.cfg.Path(AccountKeyFile))
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	d := validator.Deps{Log: n.log, Clock: n.clock, Session: n.session, Gossip: n.gossip, Chain: n.chain,
		Account: acct, AccountKey: key, Registry: n.registry, Table: n.table, Gateway: n.gateway, Store: n.store}
	if n.validator, err = validator.New(validator.Config{ProbeInterval: n.cfg.Router.ProbeInterval}, d); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n.parts = append(n.parts, n.validator)
	return nil
}

package node

import (
	"crypto/ed25519"
	"fmt"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// expertOutbox opens the serving provider's own outbox (data/expert-outbox)
// for paying its expert holders.
func (n *Node) expertOutbox(acct *consensus.Submitter) (provider.ExpertPayments, error) {
	cfg := n.cfg.settleOutbox()
	cfg.Dir = n.cfg.Path(filepath.Join("data", "expert-outbox"))
	ob, err := settle.OpenOutbox(cfg, settle.OutboxDeps{Key: n.accountKey, Chain: settle.NodeChain(n.chain), Submitter: acct,
		Deliver: deliverFunc(n), Clock: n.clock, Log: n.log, Registerer: prometheus.WrapRegistererWithPrefix("expert_", n.reg)})
	if err != nil {
		return nil, fmt.Errorf("node: expert payments: %w", err)
	}
	n.parts = append(n.parts, ob)
	return provider.OutboxPayments{Account: terms.AccountOf(n.accountKey.Public().(ed25519.PublicKey)), Outbox: ob}, nil
}

// deliverFunc delivers this node's signed records to their providers
// over its host.
func deliverFunc(n *Node) settle.DeliverFunc {
	return settle.Deliver(n.host.Dialer(), n.cfg.Network, n.log)
}

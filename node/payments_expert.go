package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// isExpertReceipt reports whether a record's receipt envelope is an
// expert holder's receipt (a serving provider paying this node for
// expert batches) rather than an infer receipt.
func isExpertReceipt(b []byte) bool {
	env, err := identity.UnmarshalEnvelope(b, expert.MaxReceiptSize)
	return err == nil && env.Domain == expert.ReceiptDomain
}

// checkExpertReceipt refuses a record paying this holder unless its
// receipt is one this machine signed, for this peer, and its request
// digest is the one derived from its quote digest (the hash of the call's
// receipts): the serving provider cannot clear a call with another call's
// proof. The price is the serving provider's to sign; the collector
// persists what it is given.
func (s recordSink) checkExpertReceipt(rec *receipt.PaymentRecord) error {
	if _, err := expert.Verify(s.certs, rec.Receipt, s.machine, s.self, s.clock.Now()); err != nil {
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("the expert receipt does not verify for this holder: %v", err)}
	}
	if d := provider.ExpertRecordDigest(rec.QuoteDigest, s.machine); d != rec.RequestDigest {
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("expert record names request %s, its receipts give %s", rec.RequestDigest, d)}
	}
	return nil
}

// expertPayments pays a serving provider's expert holders: its operator
// account signs each record as settler of its own escrow, and an outbox
// of its own (data/expert-outbox) delivers it to the holder and settles
// what the holder has not after the grace period, as a gateway's does.
type expertPayments struct {
	payer  terms.AccountID
	outbox *settle.Outbox
}

func (p expertPayments) Payer() terms.AccountID { return p.payer }

func (p expertPayments) Sign(ctx context.Context, rec *receipt.PaymentRecord, holder peer.ID) error {
	return p.outbox.Sign(ctx, rec, holder)
}

func (n *Node) expertOutbox(acct *consensus.Submitter) (provider.ExpertPayments, error) {
	key, err := consensus.LoadOrCreateAccountKey(n.cfg.Path(AccountKeyFile))
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	cfg := n.cfg.Settle.outbox(n.cfg)
	cfg.Dir = n.cfg.Path(filepath.Join("data", "expert-outbox"))
	ob, err := settle.OpenOutbox(cfg, settle.OutboxDeps{Key: key, Chain: settle.NodeChain(n.chain), Submitter: acct,
		Deliver: deliverFunc(n), Clock: n.clock, Log: n.log, Registerer: prometheus.WrapRegistererWithPrefix("expert_", n.reg)})
	if err != nil {
		return nil, fmt.Errorf("node: expert payments: %w", err)
	}
	n.parts = append(n.parts, ob)
	return expertPayments{payer: terms.AccountOf(key.Public().(ed25519.PublicKey)), outbox: ob}, nil
}

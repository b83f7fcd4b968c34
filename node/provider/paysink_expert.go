package provider

import (
	"context"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
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
func (s RecordSink) checkExpertReceipt(rec *receipt.PaymentRecord) error {
	if _, err := expert.Verify(s.certs, rec.Receipt, s.machine, s.self, s.clock.Now()); err != nil {
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("the expert receipt does not verify for this holder: %v", err)}
	}
	if d := ExpertRecordDigest(rec.QuoteDigest, s.machine); d != rec.RequestDigest {
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("expert record names request %s, its receipts give %s", rec.RequestDigest, d)}
	}
	return nil
}

// OutboxPayments pays a serving provider's expert holders: its operator
// account signs each record as settler of its own escrow, and an outbox
// of its own (data/expert-outbox) delivers it to the holder and settles
// what the holder has not after the grace period, as a gateway's does.
type OutboxPayments struct {
	Account terms.AccountID
	Outbox  *settle.Outbox
}

// Payer implements ExpertPayments.
func (p OutboxPayments) Payer() terms.AccountID { return p.Account }

// Sign implements ExpertPayments.
func (p OutboxPayments) Sign(ctx context.Context, rec *receipt.PaymentRecord, holder peer.ID) error {
	return p.Outbox.Sign(ctx, rec, holder)
}

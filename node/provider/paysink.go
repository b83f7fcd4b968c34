package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordSink is the provider's payment.Sink: the receipt is checked to be
// this machine's, the collector persists, then credit control learns the
// settler's debt is paid.
type RecordSink struct {
	c       *settle.Collector
	p       *Provider
	machine identity.MachineID
	self    peer.ID // this node's peer: an expert receipt must bind it
	certs   *identity.CertCache
	clock   clock.Clock
}

// NewRecordSink takes p's records into collector c; machine and self are
// this node's machine and peer, which a record's receipt must name.
func NewRecordSink(c *settle.Collector, p *Provider, machine identity.MachineID, self peer.ID, clk clock.Clock) RecordSink {
	return RecordSink{c: c, p: p, machine: machine, self: self, certs: identity.NewCertCache(64), clock: clk}
}

// Accept implements payment.Sink.
func (s RecordSink) Accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error {
	if err := s.checkReceipt(rec); err != nil {
		return err
	}
	if err := s.c.Accept(ctx, from, rec); err != nil {
		var r *settle.Refusal
		if errors.As(err, &r) {
			return &payment.Refusal{Code: r.Code, Reason: r.Reason}
		}
		return fmt.Errorf("provider: collect record: %w", err)
	}
	s.p.Recorded(rec)
	return nil
}

// checkReceipt refuses a record naming this machine whose receipt is not
// one this machine signed for the request the record names. The collector
// checks only that the envelope hashes to the record's receipt hash, and
// the chain skips a record whose receipt another machine signed: taking
// such a record would clear its settler's debt with one that never pays,
// and the settler would be served without end. Records without a receipt
// or naming another machine are the collector's to refuse, with its codes.
func (s RecordSink) checkReceipt(rec *receipt.PaymentRecord) error {
	if rec == nil || len(rec.Receipt) == 0 || rec.Provider != s.machine {
		return nil
	}
	if isExpertReceipt(rec.Receipt) {
		return s.checkExpertReceipt(rec)
	}
	// The usual case costs a lookup: the very receipt this provider
	// signed for the request (the collector checks the envelope hashes to
	// it). Anything else, or a call served before a restart, is verified.
	if s.p != nil {
		if h, ok := s.p.Issued(rec.RequestDigest); ok && h == rec.ReceiptHash {
			_, r, err := receipt.Parse(rec.Receipt) // its own receipt: only read what it names
			if err != nil {
				return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("the receipt does not parse: %v", err)}
			}
			return servedUnder(rec, r)
		}
	}
	r, err := receipt.VerifyCached(s.certs, rec.Receipt, s.machine, s.clock.Now())
	switch {
	case errors.Is(err, receipt.ErrWrongMachine):
		return &payment.Refusal{Code: uint32(ledger.CodeWrongMachine), Reason: fmt.Sprintf("the receipt is not signed by this machine %s: %v", s.machine, err)}
	case err != nil:
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("the receipt does not verify for this machine: %v", err)}
	case len(r.InputCommitment) != 32:
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: "the receipt's input commitment is not 32 bytes"}
	}
	if d := terms.Hash32(receipt.RequestDigest(r.Nonce, [32]byte(r.InputCommitment), r.ModelID)); d != rec.RequestDigest {
		return &payment.Refusal{Code: uint32(ledger.CodeBadReceipt), Reason: fmt.Sprintf("the receipt is for request %s, the record names %s", d, rec.RequestDigest)}
	}
	return servedUnder(rec, r)
}

// servedUnder refuses a record whose payer or settler is not the one the
// receipt names: the chain would never settle it (CodeRecordMismatch), so
// holding it must not clear its settler's debt for the call.
func servedUnder(rec *receipt.PaymentRecord, r *receipt.Receipt) error {
	if !r.Paid() {
		return &payment.Refusal{Code: uint32(ledger.CodeRecordMismatch), Reason: "the receipt names no payer and settler: the call was served unpaid"}
	}
	if !bytes.Equal(r.Payer, rec.Payer[:]) || !bytes.Equal(r.Settler, rec.Settler[:]) {
		return &payment.Refusal{Code: uint32(ledger.CodeRecordMismatch),
			Reason: fmt.Sprintf("the record names payer %s and settler %s; the call was served to payer %x under settler %x", rec.Payer, rec.Settler, r.Payer, r.Settler)}
	}
	return nil
}

// ChainEscrow reads an escrow's available balance for credit control.
func ChainEscrow(c *consensus.Node) EscrowFunc {
	return func(ctx context.Context, payer, settler terms.AccountID) (uint64, bool, error) {
		e, ok, err := c.Escrow(ctx, payer, settler)
		if err != nil || !ok {
			return 0, ok, err
		}
		return e.Available(), true, nil
	}
}

package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// gatewayPayments is a gateway's gateway.Payments on a chain: this node's
// account is the settler of its buyers' escrows; the outbox signs, keeps,
// delivers and (after a grace period) settles the records.
type gatewayPayments struct {
	clock   clock.Clock // the node's: escrow reads age by it
	chain   *consensus.Node
	outbox  *settle.Outbox
	key     ed25519.PrivateKey
	account terms.AccountID
	caller  []byte // this node's peer ID, which every authorization names

	mu    sync.Mutex
	auths map[terms.AccountID]*infer.PayAuth

	cacheMu  sync.Mutex
	escrows  map[terms.AccountID]escrowSeen // chain reads, at most escrowFresh old
	deposits map[terms.AccountID]uint64     // deposits on their way to the chain (ExpectDeposit)
}

type escrowSeen struct {
	avail  uint64
	at     time.Time
	height int64 // the chain height before the read
}

// escrowFresh bounds how old an escrow read admission uses. A read is
// reused only within the block it was made in too: the outbox drops a
// record from its unsettled sum only after the block that settled it, so
// a balance read before that block is never paired with the smaller sum.
const escrowFresh = time.Second

func newGatewayPayments(chain *consensus.Node, outbox *settle.Outbox, key ed25519.PrivateKey, self peer.ID, clk clock.Clock) *gatewayPayments {
	return &gatewayPayments{clock: clk, chain: chain, outbox: outbox, key: key, account: terms.AccountOf(key.Public().(ed25519.PublicKey)),
		caller: []byte(self), auths: map[terms.AccountID]*infer.PayAuth{}, escrows: map[terms.AccountID]escrowSeen{},
		deposits: map[terms.AccountID]uint64{}}
}

// Warming says why payer's escrow as read here may be behind (the
// gateway's gateway.Warming): a deposit into it is on its way, or this
// node's chain is still catching up, so what it reads is an old block's.
func (p *gatewayPayments) Warming(ctx context.Context, payer terms.AccountID) (string, bool) {
	p.cacheMu.Lock()
	d, ok := p.deposits[payer]
	p.cacheMu.Unlock()
	if ok {
		return fmt.Sprintf("a deposit of %d micro-units into its escrow is on its way to the chain", d), true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if !consensus.Ready(ctx, p.chain) {
		return fmt.Sprintf("this gateway's chain node is still catching up (at block %d), so the escrow it reads may be behind", p.chain.App().Height()), true
	}
	return "", false
}

// ExpectDeposit tells a gateway on a chain that a deposit of amount into
// payer's escrow with it is on its way: until done is called, a call that
// escrow cannot cover yet is answered 503 warming_up naming the deposit,
// not 402. Without a chain it does nothing.
func (n *Node) ExpectDeposit(payer terms.AccountID, amount uint64) (done func()) {
	p := n.payments
	if p == nil {
		return func() {}
	}
	p.cacheMu.Lock()
	p.deposits[payer] += amount
	p.cacheMu.Unlock()
	return func() {
		p.cacheMu.Lock()
		defer p.cacheMu.Unlock()
		// The escrow read before the deposit's block must not be reused.
		if p.deposits[payer] <= amount {
			delete(p.deposits, payer)
		} else {
			p.deposits[payer] -= amount
		}
		delete(p.escrows, payer)
	}
}

// Available is the escrow's balance − pending withdrawals − this
// gateway's records not known settled. A record settled on chain but not
// yet marked in the outbox is subtracted twice for a moment: the error
// only ever refuses, never overspends.
func (p *gatewayPayments) Available(ctx context.Context, payer terms.AccountID) (uint64, error) {
	now, h := p.clock.Now(), p.chain.App().Height()
	p.cacheMu.Lock()
	seen, ok := p.escrows[payer]
	p.cacheMu.Unlock()
	if !ok || now.Sub(seen.at) >= escrowFresh || seen.height != h {
		e, exists, err := p.chain.Escrow(ctx, payer, p.account)
		if err != nil {
			return 0, err
		}
		seen = escrowSeen{at: now, height: h}
		if exists {
			seen.avail = e.Available()
		}
		p.cacheMu.Lock()
		if len(p.escrows) >= maxAuths {
			p.escrows = map[terms.AccountID]escrowSeen{}
		}
		p.escrows[payer] = seen
		p.cacheMu.Unlock()
	}
	owed := p.outbox.Unsettled(payer)
	return seen.avail - min(seen.avail, owed), nil
}

// maxAuths bounds the authorizations kept; they are re-signed on demand.
const maxAuths = 4096

func (p *gatewayPayments) Authorize(payer terms.AccountID) (*infer.PayAuth, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.auths[payer]; ok {
		return a, nil
	}
	chainID := p.chain.App().ChainID()
	if chainID == "" {
		return nil, errors.New("node: pay authorization: no chain ID yet")
	}
	a := &infer.PayAuth{Payer: payer[:], Settler: p.account[:], Sig: ledger.SignPayAuth(p.key, chainID, p.caller, payer)}
	if len(p.auths) >= maxAuths {
		p.auths = map[terms.AccountID]*infer.PayAuth{}
	}
	p.auths[payer] = a
	return a, nil
}

func (p *gatewayPayments) Sign(ctx context.Context, rec *receipt.PaymentRecord, prov peer.ID) error {
	return p.outbox.Sign(ctx, rec, prov)
}

// deliverFunc sends records over /tenzro/payment/1.0.0. A record the
// provider refuses for good counts as delivered: retrying it cannot help,
// and the outbox still settles it itself after the grace period, where
// the chain's report says what was wrong with it.
func deliverFunc(n *Node) settle.DeliverFunc {
	return func(ctx context.Context, prov peer.ID, recs []receipt.PaymentRecord) ([]bool, error) {
		res, err := payment.Deliver(ctx, n.host.Dialer(), n.cfg.Network, prov, recs)
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			if r.Permanent() {
				n.log.Warn("provider refused a payment record", "provider", prov, "request", recs[i].RequestDigest, "code", r.Code, "reason", r.Reason)
			}
		}
		return payment.Acked(res), nil
	}
}

// recordSink is the provider's payment.Sink: the receipt is checked to be
// this machine's, the collector persists, then credit control learns the
// settler's debt is paid.
type recordSink struct {
	c       *settle.Collector
	p       *provider.Provider
	machine identity.MachineID
	self    peer.ID // this node's peer: an expert receipt must bind it
	certs   *identity.CertCache
	clock   clock.Clock
}

func newRecordSink(c *settle.Collector, p *provider.Provider, machine identity.MachineID, self peer.ID, clk clock.Clock) recordSink {
	return recordSink{c: c, p: p, machine: machine, self: self, certs: identity.NewCertCache(64), clock: clk}
}

func (s recordSink) Accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error {
	if err := s.checkReceipt(rec); err != nil {
		return err
	}
	if err := s.c.Accept(ctx, from, rec); err != nil {
		var r *settle.Refusal
		if errors.As(err, &r) {
			return &payment.Refusal{Code: r.Code, Reason: r.Reason}
		}
		return fmt.Errorf("node: collect record: %w", err)
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
func (s recordSink) checkReceipt(rec *receipt.PaymentRecord) error {
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

// escrowReader reads an escrow's available balance for credit control.
func escrowReader(c *consensus.Node) provider.EscrowFunc {
	return func(ctx context.Context, payer, settler terms.AccountID) (uint64, bool, error) {
		e, ok, err := c.Escrow(ctx, payer, settler)
		if err != nil || !ok {
			return 0, ok, err
		}
		return e.Available(), true, nil
	}
}

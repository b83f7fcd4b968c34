package gateway

import (
	"context"
	"fmt"
	"math/bits"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// Payments is the settler's side of the buyers' escrows: how a gateway on
// a chain pays providers. A buyer (Request.Payer, the payer account in
// hex) pays from its escrow whose settler is this gateway's account; the
// gateway signs one payment record per billed call, which the provider
// collects on chain.
type Payments interface {
	// Available is what payer may still spend through this gateway: its
	// escrow's balance minus pending withdrawals minus the records this
	// gateway signed that are not settled yet.
	Available(ctx context.Context, payer terms.AccountID) (uint64, error)
	// Authorize is the settler's pay authorization of this gateway's
	// peer for payer, carried by every request so a provider can hold the
	// settler (not the peer) to its debts.
	Authorize(payer terms.AccountID) (*infer.PayAuth, error)
	// Sign signs rec as settler and keeps it durably for delivery to
	// provider and settlement; it returns once rec is safe, before the
	// buyer is handed it.
	Sign(ctx context.Context, rec *receipt.PaymentRecord, provider peer.ID) error
}

// Warming is implemented by Payments that can tell why an escrow they
// read may be behind: their chain node still catching up, or a deposit
// into it on its way. A call the escrow cannot cover yet then gets 503
// warming_up with that reason, to retry shortly, rather than a 402 the
// buyer could only read as "no money".
type Warming interface {
	Warming(ctx context.Context, payer terms.AccountID) (reason string, warming bool)
}

// payer parses a buyer's account as the chain payer it names.
func chainPayer(account string) (terms.AccountID, error) {
	id, err := terms.ParseAccountID(account)
	if err != nil {
		return id, &Error{Status: http.StatusPaymentRequired, Code: "no_escrow",
			Message: fmt.Sprintf("account %q is not an on-chain payer (64 hex digits): this gateway pays from chain escrows", account)}
	}
	return id, nil
}

// checkEscrow refuses a call the payer's escrow cannot cover at price.
func (g *Gateway) checkEscrow(ctx context.Context, account string, price uint64) error {
	payer, err := chainPayer(account)
	if err != nil {
		return err
	}
	avail, err := g.payments.Available(ctx, payer)
	if err != nil {
		return fmt.Errorf("gateway: escrow of %s: %w", payer, err)
	}
	if avail < price {
		if w, ok := g.payments.(Warming); ok {
			if reason, warming := w.Warming(ctx, payer); warming {
				return &Error{Status: http.StatusServiceUnavailable, Code: "warming_up", RetryAfter: time.Second,
					Message: fmt.Sprintf("payer %s can spend %d micro-units through this gateway so far, the best quote is %d: %s; retry shortly",
						payer, avail, price, reason)}
			}
		}
		return &Error{Status: http.StatusPaymentRequired, Code: "insufficient_funds",
			Message: fmt.Sprintf("payer %s can spend %d micro-units through this gateway; the best quote is %d", payer, avail, price)}
	}
	return nil
}

// payAuth is the authorization a request to a provider carries, nil
// without payments (or for a payer that is not on chain, refused earlier).
func (g *Gateway) payAuth(account string) *infer.PayAuth {
	if g.payments == nil {
		return nil
	}
	payer, err := terms.ParseAccountID(account)
	if err != nil {
		return nil
	}
	a, err := g.payments.Authorize(payer)
	if err != nil {
		g.log.Error("pay authorization", "payer", payer, "err", err)
		return nil
	}
	return a
}

// signRecord builds and signs the chain's payment record for a billed
// call. Units counts every billed dimension, with checked sums.
func (g *Gateway) signRecord(account string, s *stream, rd, rh [32]byte, units pricing.Units, price uint64) (*receipt.PaymentRecord, error) {
	payer, err := chainPayer(account)
	if err != nil {
		return nil, err
	}
	var n, carry uint64
	for _, v := range []uint64{units.InputTokens, units.OutputTokens, units.CachedTokens, units.PixelSteps, units.AudioMs, units.ExpertTokens} {
		if n, carry = bits.Add64(n, v, 0); carry != 0 {
			return nil, fmt.Errorf("gateway: billed units overflow")
		}
	}
	rec := &receipt.PaymentRecord{
		Payer: payer, Provider: s.choice.offer.Machine, RequestDigest: terms.Hash32(rd), QuoteDigest: terms.Hash32(s.choice.quote.Digest),
		Price: price, ReceiptHash: terms.Hash32(rh), Receipt: s.final.Receipt, Units: n,
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Deadline)
	defer cancel()
	if err := g.payments.Sign(ctx, rec, s.choice.offer.Peer); err != nil {
		return nil, fmt.Errorf("gateway: sign payment record: %w", err)
	}
	return rec, nil
}

package provider

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ExpertPayments signs and delivers the serving provider's payment
// records to its expert holders (on a chain: an outbox like the
// gateway's, the provider's operator account paying from its own escrow
// as settler). Sign returns once the record is durable; delivery and
// settlement follow in the background.
type ExpertPayments interface {
	Payer() terms.AccountID
	Sign(ctx context.Context, rec *receipt.PaymentRecord, holder peer.ID) error
}

// ExpertRecordDomain separates the request digest of an expert payment
// record from every other digest.
const ExpertRecordDomain = "tenzro/v1/expert-payment"

// ExpertRecordDigest is the request digest of the record paying a holder
// machine for one call: bound to the hash of that call's receipts from
// the holder, so two calls (or two holders of one call) never share one,
// and a holder can recompute it from the record's quote digest.
func ExpertRecordDigest(receiptsHash [32]byte, holder [32]byte) terms.Hash32 {
	b := make([]byte, 0, len(ExpertRecordDomain)+64)
	b = append(b, ExpertRecordDomain...)
	b = append(b, receiptsHash[:]...)
	b = append(b, holder[:]...)
	return sha256.Sum256(b)
}

// expertRecord is the unsigned record paying one holder's usage for a
// call, or nil when it did no paid work (no verified rows, or a price of
// 0): payer pays the holder's machine expert-tokens × its price, the
// quote digest is the hash of every receipt the holder signed for the
// call (HolderUsage.ReceiptsHash), and the record carries the first of
// them as proof of the holder's machine. A price that does not fit 64
// bits is an error, never a wrapped amount.
func expertRecord(payer terms.AccountID, u expert.HolderUsage) (*receipt.PaymentRecord, error) {
	if u.ExpertTokens == 0 || u.Price == 0 || len(u.Receipts) == 0 {
		return nil, nil
	}
	hi, price := bits.Mul64(u.ExpertTokens, u.Price)
	if hi != 0 {
		return nil, fmt.Errorf("provider: %d expert-tokens at %d overflow a price", u.ExpertTokens, u.Price)
	}
	if len(u.Receipts[0]) > receipt.MaxReceiptBytes {
		return nil, fmt.Errorf("provider: expert receipt of %d bytes exceeds %d", len(u.Receipts[0]), receipt.MaxReceiptBytes)
	}
	rh := u.ReceiptsHash()
	return &receipt.PaymentRecord{
		Payer: payer, Provider: u.Machine, RequestDigest: ExpertRecordDigest(rh, u.Machine), QuoteDigest: rh,
		Price: price, Units: u.ExpertTokens, Receipt: u.Receipts[0], ReceiptHash: sha256.Sum256(u.Receipts[0]),
	}, nil
}

// expertSignTimeout bounds the signing of one answered call's holder
// records (each made durable by the outbox) before its final frame.
const expertSignTimeout = 5 * time.Second

// payCall signs one record per holder of an answered call and returns
// each holder's part as the final frame reports it, with the amount
// signed to it. It runs after the forward passes and before the final
// frame, as a gateway signs its record before answering: the buyer is
// told what was signed, not what would be. Delivery and settlement stay
// in the background (the outbox). A holder left unpaid says why.
func (r *remoteExperts) payCall(ctx context.Context, model [32]byte, t *expert.Tally) []infer.ExpertUse {
	pay := r.p.d.ExpertPayments
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), expertSignTimeout)
	defer cancel()
	var out []infer.ExpertUse
	for _, u := range t.Holders() {
		e := infer.ExpertUse{Holder: []byte(u.Holder), Machine: append([]byte(nil), u.Machine[:]...),
			Batches: uint64(u.Batches), ExpertTokens: u.ExpertTokens, Price: u.Price}
		switch {
		case u.ExpertTokens == 0 || len(u.Receipts) == 0:
			e.Unpaid = infer.UnpaidNoWork
		case u.Price == 0:
			e.Unpaid = infer.UnpaidFree
		case pay == nil:
			e.Unpaid = infer.UnpaidOffChain
		default:
			rec, err := r.signHolder(ctx, pay, model, &u)
			if err != nil {
				e.Unpaid = infer.UnpaidFailed
				break
			}
			e.Paid, e.Record = rec.Price, append([]byte(nil), rec.RequestDigest[:]...)
		}
		out = append(out, e)
	}
	return out
}

// payHolders signs one record per holder of a finished call; the forward
// pass never waits for it (Generate has returned). A failure is logged:
// the holder's work stays unpaid for this call, which its operator sees
// in the serving provider's log and metrics.
func (r *remoteExperts) payHolders(ctx context.Context, model [32]byte, t *expert.Tally) {
	pay := r.p.d.ExpertPayments
	if pay == nil {
		return
	}
	for _, u := range t.Holders() {
		if rec, err := r.signHolder(ctx, pay, model, &u); err == nil && rec != nil {
			r.p.d.Log.Debug("expert holder paid", "holder", u.Holder, "expert_tokens", rec.Units, "price", rec.Price)
		}
	}
}

// signHolder signs the record paying u's work for one call (nil when it
// did no paid work), first keeping the binding of each of its sampled
// receipts to the record: a crash after the signature never leaves a
// settled record whose batches cannot be disputed. A binding not kept
// is logged and the holder is paid all the same.
func (r *remoteExperts) signHolder(ctx context.Context, pay ExpertPayments, model [32]byte, u *expert.HolderUsage) (*receipt.PaymentRecord, error) {
	rec, err := expertRecord(pay.Payer(), *u)
	if err == nil && rec == nil {
		return nil, nil
	}
	if err == nil {
		if berr := r.bind(model, rec, u); berr != nil {
			r.p.d.Log.Error("expert dispute binding not kept: the call's sampled batches cannot be disputed",
				"holder", u.Holder, "sampled", len(u.Sampled), "err", berr)
		}
		err = pay.Sign(ctx, rec, u.Holder)
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			r.p.d.Log.Error("expert payment record not signed", "holder", u.Holder, "expert_tokens", u.ExpertTokens, "err", err)
		}
		return nil, err
	}
	return rec, nil
}

package provider

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// ExpertPayments signs and delivers the serving provider's payment
// records to its expert holders (on a chain: an outbox like the
// gateway's, the provider's operator account paying from its own escrow
// as settler). Sign returns once the record is durable; delivery and
// settlement follow in the background.
type ExpertPayments interface {
	Payer() ledger.AccountID
	Sign(ctx context.Context, rec *ledger.PaymentRecord, holder peer.ID) error
}

// ExpertRecordDomain separates the request digest of an expert payment
// record from every other digest.
const ExpertRecordDomain = "tenzro/v1/expert-payment"

// ExpertRecordDigest is the request digest of the record paying a holder
// machine for one call: bound to the hash of that call's receipts from
// the holder, so two calls (or two holders of one call) never share one,
// and a holder can recompute it from the record's quote digest.
func ExpertRecordDigest(receiptsHash [32]byte, holder [32]byte) ledger.Hash32 {
	b := make([]byte, 0, len(ExpertRecordDomain)+64)
	b = append(b, ExpertRecordDomain...)
	b = append(b, receiptsHash[:]...)
	b = append(b, holder[:]...)
	return sha256.Sum256(b)
}

// ExpertRecords returns the unsigned payment record of each holder of
// one call's tally that did paid work: payer pays the holder's machine
// expert-tokens × its price, the quote digest is the hash of every
// receipt the holder signed for the call (HolderUsage.ReceiptsHash), and
// the record carries the first of them as proof of the holder's machine.
// A price that does not fit 64 bits is an error, never a wrapped amount.
func ExpertRecords(payer ledger.AccountID, t *expert.Tally) ([]ledger.PaymentRecord, []peer.ID, error) {
	var recs []ledger.PaymentRecord
	var holders []peer.ID
	for _, u := range t.Holders() {
		if u.ExpertTokens == 0 || u.Price == 0 || len(u.Receipts) == 0 {
			continue
		}
		hi, price := bits.Mul64(u.ExpertTokens, u.Price)
		if hi != 0 {
			return nil, nil, fmt.Errorf("provider: %d expert-tokens at %d overflow a price", u.ExpertTokens, u.Price)
		}
		if len(u.Receipts[0]) > ledger.MaxReceiptBytes {
			return nil, nil, fmt.Errorf("provider: expert receipt of %d bytes exceeds %d", len(u.Receipts[0]), ledger.MaxReceiptBytes)
		}
		rh := u.ReceiptsHash()
		recs = append(recs, ledger.PaymentRecord{
			Payer: payer, Provider: u.Machine, RequestDigest: ExpertRecordDigest(rh, u.Machine), QuoteDigest: rh,
			Price: price, Units: u.ExpertTokens, Receipt: u.Receipts[0], ReceiptHash: sha256.Sum256(u.Receipts[0]),
		})
		holders = append(holders, u.Holder)
	}
	return recs, holders, nil
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
	recs, holders, err := ExpertRecords(pay.Payer(), t)
	if err != nil {
		r.p.d.Log.Error("expert payment records", "err", err)
		return
	}
	for i := range recs {
		if err := pay.Sign(ctx, &recs[i], holders[i]); err != nil && !errors.Is(err, context.Canceled) {
			r.p.d.Log.Error("expert payment record not signed", "holder", holders[i], "price", recs[i].Price, "err", err)
			continue
		}
		r.p.d.Log.Debug("expert holder paid", "holder", holders[i], "expert_tokens", recs[i].Units, "price", recs[i].Price)
	}
}

package settle

import (
	"context"
	"log/slog"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// Deliver sends records over /tenzro/payment/1.0.0. A record the
// provider refuses for good counts as delivered: retrying it cannot help,
// and the outbox still settles it itself after the grace period, where
// the chain's report says what was wrong with it.
func Deliver(h host.Host, network string, log *slog.Logger) DeliverFunc {
	return func(ctx context.Context, prov peer.ID, recs []receipt.PaymentRecord) ([]bool, error) {
		res, err := payment.Deliver(ctx, h, network, prov, recs)
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			if r.Permanent() {
				log.Warn("provider refused a payment record", "provider", prov, "request", recs[i].RequestDigest, "code", r.Code, "reason", r.Reason)
			}
		}
		return payment.Acked(res), nil
	}
}

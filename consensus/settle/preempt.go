package settle

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// onChain is what the chain holds for one record's call.
type onChain uint8

const (
	notSettled  onChain = iota // nothing settled for (payer, request) yet
	settledSame                // this very record settled it
	settledElse                // another record settled it: this one is pre-empted
)

// lookup reads what the chain settled for rec's (payer, request) and
// compares its digest with rec's own. reason names the settled record
// when it is another.
func lookup(ctx context.Context, chain Chain, rec *receipt.PaymentRecord) (onChain, string, error) {
	theirs, ok, err := chain.Settled(ctx, rec.Payer, rec.RequestDigest)
	if err != nil || !ok {
		return notSettled, "", err
	}
	ours, err := receipt.RecordDigest(chain.ChainID(), rec)
	if err != nil {
		return notSettled, "", fmt.Errorf("settle: record digest: %w", err)
	}
	if theirs == ours {
		return settledSame, "", nil
	}
	return settledElse, preemptReason(theirs, ours), nil
}

func preemptReason(theirs, ours terms.Hash32) string {
	return fmt.Sprintf("pre-empted: the chain settled record %s for this call, this record is %s", theirs, ours)
}

// checkDuplicates keeps a Duplicate outcome only when the record the chain
// settled for the call is recs[i] itself; otherwise the outcome becomes
// Preempted (another record, perhaps signed by somebody else for another
// price, took the call: counting it settled would hide that the provider
// was not paid what this record says). A record settled under the same
// provider and request but another payer is not found under its own
// (payer, request) and is Preempted too. A failed read leaves the outcome
// Err: the record is submitted, and checked, again later.
func checkDuplicates(ctx context.Context, chain Chain, side string, log *slog.Logger, recs []receipt.PaymentRecord, outs []Outcome) {
	for i := range outs {
		if outs[i].Status != Duplicate {
			continue
		}
		rec := &recs[i]
		got, reason, err := lookup(ctx, chain, rec)
		switch {
		case err != nil:
			outs[i] = Outcome{Status: Err, Err: fmt.Errorf("settle: %s: checking duplicate record: %w", side, err)}
		case got == settledSame:
		default:
			if reason == "" {
				reason = "pre-empted: the chain settled another record for this provider's call"
			}
			outs[i].Status, outs[i].Reason = Preempted, reason
			logPreempted(log, side, rec, reason)
		}
	}
}

// logPreempted is the error line every pre-empted record gets: the call
// was settled with another record than the one this node holds.
func logPreempted(log *slog.Logger, side string, rec *receipt.PaymentRecord, reason string) {
	log.Error("settle: "+side+": record pre-empted: another record settled this call", "payer", rec.Payer, "settler", rec.Settler,
		"provider", rec.Provider, "request", rec.RequestDigest, "price", rec.Price, "reason", reason)
}

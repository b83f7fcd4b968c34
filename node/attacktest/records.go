package attacktest

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ownEscrow makes sure the buyer has an escrow it settles itself: the
// front-runner's tool (tenzrod tx escrow fund --key buyer.key).
func (e *env) ownEscrow(ctx context.Context) (ledger.Escrow, error) {
	b := e.t.buyer()
	if es, ok, err := e.c.escrow(ctx, b, b); err != nil || (ok && es.Balance >= 1000) {
		return es, err
	}
	r, err := e.c.submit(ctx, e.t.BuyerKey, &ledger.EscrowFund{Amount: 10_000, Settler: b})
	if err != nil {
		return ledger.Escrow{}, err
	}
	if r.Code != uint32(ledger.CodeOK) {
		return ledger.Escrow{}, fmt.Errorf("attacktest: the buyer's own escrow: %s: %s", r.Result, r.Log)
	}
	es, _, err := e.c.escrow(ctx, b, b)
	return es, err
}

// honestSettled waits for the chain to hold the record of honest's call
// and checks it is honest's: its settler and its price.
func (e *env) honestSettled(ctx context.Context, honest *receipt.PaymentRecord) (string, bool, error) {
	var p payment
	err := e.c.until(ctx, "the honest record to settle", func() (bool, error) {
		var ok bool
		var err error
		p, ok, err = e.c.settled(ctx, honest.Payer, honest.RequestDigest)
		return ok, err
	})
	if err != nil {
		return "", false, err
	}
	if p.Settler != honest.Settler.String() || p.Price != honest.Price {
		return fmt.Sprintf("settled at %d µ by settler %.8s…, the honest record is %d µ by %.8s…", p.Price, p.Settler, honest.Price, honest.Settler), false, nil
	}
	return fmt.Sprintf("honest record settled at %d µ", p.Price), true, nil
}

// frontRun is issue 35's critical break as found: the buyer re-signs the
// gateway's record at price 1 with itself as settler and submits it first.
func frontRun(ctx context.Context, e *env) (Verdict, string, error) {
	own0, err := e.ownEscrow(ctx)
	if err != nil {
		return Failed, "", err
	}
	a, err := e.paidCall(ctx, "front-run me")
	if err != nil {
		return Failed, "", err
	}
	forged := *a.Record
	forged.Price, forged.Settler = 1, e.t.buyer()
	if err := receipt.SignRecord(e.t.BuyerKey, e.c.chainID, &forged); err != nil {
		return Failed, "", err
	}
	rep, _, err := e.c.settle(ctx, e.t.BuyerKey, []receipt.PaymentRecord{forged})
	if err != nil {
		return Failed, "", err
	}
	if rep.Settled != 0 {
		return Broke, fmt.Sprintf("the buyer's 1 µ own-settler record settled (honest price %d µ)", a.Record.Price), nil
	}
	code := rep.Skipped[0].Code
	detail, ok, err := e.honestSettled(ctx, a.Record)
	if err != nil {
		return Failed, "", err
	}
	own, _, err := e.c.escrow(ctx, e.t.buyer(), e.t.buyer())
	if err != nil {
		return Failed, "", err
	}
	if !ok || own.Balance != own0.Balance {
		return Broke, fmt.Sprintf("forged refused with %v, but %s; own escrow %d -> %d", code, detail, own0.Balance, own.Balance), nil
	}
	return Held, fmt.Sprintf("1 µ own-settler record refused (%d %v); %s", code, code, detail), nil
}

// recordCombos re-signs (or forges) the gateway's record in every
// combination of settler, payer, price and units, submits them all before
// the provider's collector can, then races the honest record itself
// (anyone may submit it): none may settle but the honest one, at its
// price.
func recordCombos(ctx context.Context, e *env) (Verdict, string, error) {
	if _, err := e.ownEscrow(ctx); err != nil {
		return Failed, "", err
	}
	a, err := e.paidCall(ctx, "combinations")
	if err != nil {
		return Failed, "", err
	}
	h := *a.Record
	strangerPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		return Failed, "", fmt.Errorf("attacktest: stranger key: %w", err)
	}
	stranger := terms.AccountOf(strangerPub)
	type combo struct {
		name string
		rec  receipt.PaymentRecord
	}
	var combos []combo
	for _, settler := range []string{"own", "gateway"} {
		for _, payer := range []string{"buyer", "stranger"} {
			for _, price := range []uint64{1, max(h.Price, 1) - 1, h.Price, h.Price + 1000} {
				for _, units := range []uint64{h.Units, h.Units + 1000, 1} {
					r := h
					r.Price, r.Units = price, units
					if payer == "stranger" {
						r.Payer = stranger
					}
					if settler == "own" {
						r.Settler = e.t.buyer()
					}
					// The buyer signs every one: it holds no other key. A
					// record naming the gateway as settler is a forgery.
					if err := receipt.SignRecord(e.t.BuyerKey, e.c.chainID, &r); err != nil {
						return Failed, "", err
					}
					combos = append(combos, combo{fmt.Sprintf("settler=%s payer=%s price=%d units=%d", settler, payer, price, units), r})
				}
			}
		}
	}
	recs := make([]receipt.PaymentRecord, len(combos))
	for i := range combos {
		recs[i] = combos[i].rec
	}
	rep, _, err := e.c.settle(ctx, e.t.BuyerKey, recs)
	if err != nil {
		return Failed, "", err
	}
	codes := map[ledger.Code]int{}
	for _, s := range rep.Skipped {
		codes[s.Code]++
	}
	if rep.Settled != 0 {
		return Broke, fmt.Sprintf("%d of %d re-signed records settled (codes of the rest %v)", rep.Settled, len(recs), codes), nil
	}
	// The race: the buyer submits the honest record verbatim; it settles
	// (or is a duplicate of the collector's, which is the same record).
	raceRep, _, err := e.c.settle(ctx, e.t.BuyerKey, []receipt.PaymentRecord{h})
	if err != nil {
		return Failed, "", err
	}
	detail, ok, err := e.honestSettled(ctx, &h)
	if err != nil {
		return Failed, "", err
	}
	if !ok {
		return Broke, detail, nil
	}
	race := "settled it"
	if raceRep.Settled == 0 {
		race = "found it settled already (" + raceRep.Skipped[0].Code.String() + ")"
	}
	return Held, fmt.Sprintf("%d combinations refused %s; racing the honest record %s; %s", len(recs), codeList(codes), race, detail), nil
}

func codeList(m map[ledger.Code]int) string {
	var parts []string
	for c := ledger.Code(0); c < 100; c++ {
		if n := m[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d×%d", n, c))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// neverServed is a gateway signing records, with its own settler key,
// for calls that never happened: a made-up request under another call's
// receipt, and with no receipt at all; and the settler lowering its own
// record's price below the receipt's.
func neverServed(ctx context.Context, e *env) (Verdict, string, error) {
	if e.t.SettlerKey == nil {
		return NA, "needs the gateway's account key", nil
	}
	a, err := e.paidCall(ctx, "a real call whose receipt is reused")
	if err != nil {
		return Failed, "", err
	}
	h := *a.Record
	made := h
	made.RequestDigest = terms.Hash32{0x42, byte(h.Time), byte(h.Time >> 8)}
	noReceipt := made
	noReceipt.RequestDigest[0], noReceipt.Receipt, noReceipt.ReceiptHash = 0x43, nil, terms.Hash32{}
	_, rc, err := receipt.Parse(h.Receipt)
	if err != nil || rc.Price == 0 {
		return Failed, "", fmt.Errorf("attacktest: the honest record's receipt names no price (%w)", err)
	}
	lowered := h
	lowered.Price = rc.Price - 1 // one below what the provider's receipt signs
	recs := []receipt.PaymentRecord{made, noReceipt, lowered}
	for i := range recs {
		if err := receipt.SignRecord(e.t.SettlerKey, e.c.chainID, &recs[i]); err != nil {
			return Failed, "", err
		}
	}
	want := []ledger.Code{ledger.CodeRecordMismatch, ledger.CodeBadReceipt, ledger.CodeUnderpriced}
	rep, _, err := e.c.settle(ctx, e.t.BuyerKey, recs)
	if err != nil {
		return Failed, "", err
	}
	if rep.Settled != 0 {
		return Broke, fmt.Sprintf("%d of 3 records for calls never served (or underpriced) settled", rep.Settled), nil
	}
	got := make([]string, len(rep.Skipped))
	for i, s := range rep.Skipped {
		got[i] = fmt.Sprint(int(s.Code))
		if s.Code != want[s.Index] && s.Code != ledger.CodeDuplicateRecord {
			return Broke, fmt.Sprintf("record %d refused with %v, want %v", s.Index, s.Code, want[s.Index]), nil
		}
	}
	detail, ok, err := e.honestSettled(ctx, &h)
	if err != nil || !ok {
		return Broke, detail, err
	}
	return Held, fmt.Sprintf("made-up request, no receipt, price below the receipt's refused [%s]; %s", strings.Join(got, " "), detail), nil
}

package ledger

import (
	"bytes"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// KeyServed is the state key marking that machine m's call with request
// digest rd is settled; its value is the settled record's receipt.RecordDigest. It
// dedupes records carrying a provider's receipt (which binds their payer
// and settler) by provider and request, whoever submits: a provider is
// paid once per call it served. Expert holders' records are deduped by
// (payer, request) only (their receipts name no payer).
func KeyServed(m identity.MachineID, rd terms.Hash32) []byte { return cat("i/", m[:], rd[:]) }

// bindReceipt checks that a provider's receipt (the envelope payload of
// domain ReceiptDomain, already verified as signed by machine) is the
// receipt of the record's call and that the record is what the provider
// served under: the request digest is the receipt's (nonce, input, model),
// the payer and settler are the ones the receipt names, and the price is
// at least the one it signs. Without these a holder of the receipt (the
// buyer gets it with every answer) could sign its own record for the call
// from an escrow it settles itself, at any price, and pre-empt the real
// one. The price may exceed the receipt's: a gateway adds its surcharge
// for the verification level, and only the settler the receipt names can
// sign for that escrow. i is the record's index, for the message.
func bindReceipt(i int, rec *receipt.PaymentRecord, payloadType string, payload []byte, machine identity.MachineID) error {
	if payloadType != receipt.PayloadType {
		return reject(CodeBadReceipt, "record %d: receipt payload type %q, want %q", i, payloadType, receipt.PayloadType)
	}
	r, err := receipt.UnmarshalReceipt(payload)
	if err != nil {
		return reject(CodeBadReceipt, "record %d: %v", i, err)
	}
	if !bytes.Equal(r.MachineID, machine[:]) {
		return reject(CodeWrongMachine, "record %d: receipt names machine %x, provider is %s", i, r.MachineID, machine)
	}
	if rd := receipt.RequestDigest(r.Nonce, [32]byte(r.InputCommitment), r.ModelID); terms.Hash32(rd) != rec.RequestDigest {
		return reject(CodeRecordMismatch, "record %d: request %s, the receipt is for request %s", i, rec.RequestDigest, terms.Hash32(rd))
	}
	if !r.Paid() {
		return reject(CodeRecordMismatch, "record %d: the receipt names no payer and settler: the provider served the call unpaid", i)
	}
	if !bytes.Equal(r.Payer, rec.Payer[:]) || !bytes.Equal(r.Settler, rec.Settler[:]) {
		return reject(CodeRecordMismatch, "record %d: payer %s, settler %s; the provider served payer %x under settler %x",
			i, rec.Payer, rec.Settler, r.Payer, r.Settler)
	}
	if rec.Price < r.Price {
		return reject(CodeUnderpriced, "record %d: price %d below the %d the provider's receipt signs", i, rec.Price, r.Price)
	}
	return nil
}

// checkServed refuses a record for a call of its provider already settled
// (by any record, whoever submitted it).
func checkServed(st *Overlay, i int, rec *receipt.PaymentRecord) error {
	seen, err := st.Get(KeyServed(rec.Provider, rec.RequestDigest))
	if err != nil {
		return err
	}
	if seen != nil {
		return reject(CodeDuplicateRecord, "record %d: request %s served by %s already settled (record %x)", i, rec.RequestDigest, rec.Provider, seen)
	}
	return nil
}

// markServed notes rec settled under KeyServed.
func markServed(st *Overlay, chainID string, rec *receipt.PaymentRecord) error {
	d, err := receipt.RecordDigest(chainID, rec)
	if err != nil {
		return fmt.Errorf("ledger: record digest: %w", err)
	}
	st.Set(KeyServed(rec.Provider, rec.RequestDigest), d[:])
	return nil
}

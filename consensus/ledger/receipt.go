package ledger

import (
	"crypto/sha256"
	"errors"
	"time"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ReceiptDomain is the identity.Envelope domain of a provider's receipt.
const ReceiptDomain = "tenzro/v1/receipt"

// ExpertReceiptDomain is the domain of an expert holder's receipt
// (p2p/expert): a serving provider's record paying a holder carries one,
// signed by the holder's machine like any receipt.
const ExpertReceiptDomain = "tenzro/v1/expert-receipt"

// receiptChecker verifies receipt envelopes for one settlement. Records of
// one batch usually share a session certificate, so certificate checks
// (ML-DSA-65, two ECDSA and one Ed25519 signature) are cached per
// (certificate, machine) for the duration of the transaction; the block
// time is fixed, so the cache cannot change an outcome.
type receiptChecker struct {
	now   time.Time
	certs map[[64]byte]error
	sigs  *sigCache // session signatures already verified (pure, time-independent)
}

func newReceiptChecker(blockTime int64, sigs *sigCache) *receiptChecker {
	return &receiptChecker{now: time.Unix(blockTime, 0), certs: map[[64]byte]error{}, sigs: sigs}
}

// check verifies that rec.Receipt hashes to rec.ReceiptHash, is a receipt
// envelope whose certificate belongs to machine (the record's registered
// provider) and is valid at the block time, and that its session signature
// verifies, and for a provider's receipt (not an expert holder's) that
// the record is the one the provider served (bindReceipt): bound reports
// that case. i is the record's index, for the message.
func (c *receiptChecker) check(i int, rec *receipt.PaymentRecord, machine identity.MachineID) (bound bool, err error) {
	if got := terms.Hash32(sha256.Sum256(rec.Receipt)); got != rec.ReceiptHash {
		return false, reject(CodeBadReceipt, "record %d: receipt hashes to %s, record says %s", i, got, rec.ReceiptHash)
	}
	env, err := identity.UnmarshalEnvelope(rec.Receipt, receipt.MaxReceiptBytes)
	if err != nil {
		return false, reject(CodeBadReceipt, "record %d: %v", i, err)
	}
	if env.Domain != ReceiptDomain && env.Domain != ExpertReceiptDomain {
		return false, reject(CodeBadReceipt, "record %d: envelope domain %q, want %q or %q", i, env.Domain, ReceiptDomain, ExpertReceiptDomain)
	}
	var key [64]byte
	h := env.Cert.Hash()
	copy(key[:32], h[:])
	copy(key[32:], machine[:])
	certErr, seen := c.certs[key]
	if !seen {
		certErr = env.Cert.Verify(machine, c.now)
		c.certs[key] = certErr
	}
	switch {
	case errors.Is(certErr, identity.ErrMachineMismatch):
		return false, reject(CodeWrongMachine, "record %d: receipt signed by machine %x, provider is %s", i, env.Cert.MachineID, machine)
	case certErr != nil:
		return false, reject(CodeBadReceipt, "record %d: session certificate: %v", i, certErr)
	}
	if err := c.sigs.verify(sigKey('e', rec.ReceiptHash[:]), env.VerifySignature); err != nil {
		return false, reject(CodeBadReceipt, "record %d: %v", i, err)
	}
	if env.Domain == ReceiptDomain {
		return true, bindReceipt(i, rec, env.PayloadType, env.Payload, machine)
	}
	return false, nil
}

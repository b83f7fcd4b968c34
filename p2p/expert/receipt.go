package expert

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Envelope labels and bounds of an expert receipt: the ledger's, since
// the chain judges a dispute over the very bytes the holder signed. No
// other message kind verifies as one, nor the reverse. MaxBatches entries
// and MaxRows positions fit well within MaxReceiptPayload.
const (
	ReceiptDomain      = ledger.ExpertReceiptDomain
	ReceiptPayloadType = ledger.ExpertReceiptPayloadType
	MaxReceiptPayload  = ledger.MaxExpertReceiptPayload
	MaxReceiptSize     = ledger.MaxExpertReceiptBytes
)

// Verification errors; Verify and Match wrap exactly one of them.
var (
	ErrBadReceipt     = errors.New("expert: malformed receipt")
	ErrWrongSigner    = errors.New("expert: receipt not signed by the holder's pinned machine and peer")
	ErrBadSignature   = errors.New("expert: bad receipt signature")
	ErrInputMismatch  = errors.New("expert: receipt does not name the input sent")
	ErrOutputMismatch = errors.New("expert: rows returned do not match the receipt's commitment")
)

// Receipt is a holder's signed statement of one exchange: for each expert
// batch, the positions, the SHA-256 of the exact input bytes it received
// and the SHA-256 of the exact output bytes it returned. It is the
// ledger's ExpertReceipt, which dispute evidence carries.
type Receipt = ledger.ExpertReceipt

// Entry is one expert batch of a receipt.
type Entry = ledger.ExpertEntry

// NewReceipt describes the exchange of req answered with outputs.
func NewReceipt(sess *identity.Session, req *Request, outputs [][]byte, now time.Time) *Receipt {
	r := &Receipt{Model: req.Model, Layer: req.Layer, Machine: slices.Clone(sess.Cert.MachineID),
		Peer: slices.Clone(sess.Cert.PeerID), TimeMs: now.UnixMilli(), Entries: make([]Entry, len(req.Batches))}
	for i, b := range req.Batches {
		r.Entries[i] = Entry{Expert: b.Expert, Positions: b.Positions, InputHash: sha256.Sum256(b.Rows)}
		if i < len(outputs) {
			r.Entries[i].OutputHash = sha256.Sum256(outputs[i])
		}
	}
	return r
}

// Seal seals r with the holder's session key.
func Seal(sess *identity.Session, r *Receipt) (*identity.Envelope, error) {
	payload, err := cborx.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("expert: encode receipt: %w", err)
	}
	if len(payload) > MaxReceiptPayload {
		return nil, fmt.Errorf("expert: receipt of %d bytes exceeds %d", len(payload), MaxReceiptPayload)
	}
	env, err := sess.Seal(ReceiptDomain, ReceiptPayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("expert: sign receipt: %w", err)
	}
	return env, nil
}

// Sign seals r with the holder's session key and returns the envelope's
// encoding. omitCert leaves the session certificate out, for a caller
// that holds it already (Request.KnownCert): it is some 5 KB per answer.
func Sign(sess *identity.Session, r *Receipt, omitCert bool) ([]byte, error) {
	env, err := Seal(sess, r)
	if err != nil {
		return nil, err
	}
	if omitCert {
		env.Cert = identity.Certificate{}
	}
	b, err := env.Marshal()
	if err != nil {
		return nil, fmt.Errorf("expert: sign receipt: %w", err)
	}
	return b, nil
}

// DecodeReceipt strictly decodes a receipt envelope and its payload
// without verifying anything.
func DecodeReceipt(b []byte) (*identity.Envelope, *Receipt, error) {
	env, r, err := ledger.ParseExpertReceipt(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadReceipt, err)
	}
	return env, r, nil
}

// Verify decodes a receipt envelope and checks that its certificate chains
// to pinned (the holder's registered or first-seen machine) and binds
// holder (the peer that answered the stream), the session signature, and
// that the receipt names the same machine and peer. cache may be nil.
func Verify(cache *identity.CertCache, b []byte, pinned identity.MachineID, holder peer.ID, now time.Time) (*Receipt, error) {
	if pinned.IsZero() {
		return nil, fmt.Errorf("%w: no pinned machine for %s", ErrWrongSigner, holder)
	}
	env, r, err := DecodeReceipt(b)
	if err != nil {
		return nil, err
	}
	if err := cache.Verify(&env.Cert, pinned, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWrongSigner, err)
	}
	if !bytes.Equal(env.Cert.PeerID, []byte(holder)) {
		return nil, fmt.Errorf("%w: certificate binds another peer than %s", ErrWrongSigner, holder)
	}
	if err := env.VerifySignature(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if !bytes.Equal(r.Machine, env.Cert.MachineID) || !bytes.Equal(r.Peer, env.Cert.PeerID) {
		return nil, fmt.Errorf("%w: receipt names another machine or peer than its certificate", ErrWrongSigner)
	}
	return r, nil
}

// Match checks a verified receipt against the request sent and the
// outputs received: the same model, layer, experts and positions, the
// SHA-256 of each batch's bytes as sent, and of each output as received.
func Match(r *Receipt, req *Request, outputs [][]byte) error {
	if r.Model != req.Model || r.Layer != req.Layer || len(r.Entries) != len(req.Batches) {
		return fmt.Errorf("%w: receipt for model %x layer %d with %d batches, sent %x layer %d with %d",
			ErrInputMismatch, r.Model[:4], r.Layer, len(r.Entries), req.Model[:4], req.Layer, len(req.Batches))
	}
	if len(outputs) != len(req.Batches) {
		return fmt.Errorf("%w: %d outputs for %d batches", ErrOutputMismatch, len(outputs), len(req.Batches))
	}
	for i, b := range req.Batches {
		e := &r.Entries[i]
		if e.Expert != b.Expert || !slices.Equal(e.Positions, b.Positions) {
			return fmt.Errorf("%w: entry %d names expert %d, sent %d", ErrInputMismatch, i, e.Expert, b.Expert)
		}
		if e.InputHash != sha256.Sum256(b.Rows) {
			return fmt.Errorf("%w: entry %d (expert %d): input hash differs from the bytes sent", ErrInputMismatch, i, b.Expert)
		}
		if e.OutputHash != sha256.Sum256(outputs[i]) {
			return fmt.Errorf("%w: entry %d (expert %d)", ErrOutputMismatch, i, b.Expert)
		}
	}
	return nil
}

// withCert returns the receipt envelope b with cert put back when the
// holder left it out (its certificate empty), and whether it did; any
// other envelope is returned as it is, for Verify to judge.
func withCert(b []byte, cert *identity.Certificate) ([]byte, bool, error) {
	env, err := identity.UnmarshalEnvelope(b, MaxReceiptSize)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrBadReceipt, err)
	}
	if len(env.Cert.MachineID) != 0 || cert == nil {
		return b, false, nil
	}
	env.Cert = cert.Clone()
	full, err := env.Marshal()
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrBadReceipt, err)
	}
	return full, true, nil
}

// Hash is the SHA-256 of a receipt envelope, what a payment record to the
// holder lists.
func Hash(envelope []byte) [32]byte { return sha256.Sum256(envelope) }

package gossip

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// ValidateAnnouncement applies the announce topic's rules to one message
// that from propagated. The rules are the heartbeat's, and in addition a
// region finer than a country is rejected. The first valid announcement of
// an unregistered peer pins its machine ID (see Pins). A machine other than
// the one pinned is Ignore, not Reject: the pin is this node's view.
func (v *Validator) ValidateAnnouncement(_ context.Context, from peer.ID, data []byte) Result {
	return validatePayload(v, KindAnnounce, "announcement", data, func(an *Announcement, env *identity.Envelope) Result {
		return v.checkAnnouncement(an, env, from)
	})
}

func (v *Validator) checkAnnouncement(an *Announcement, env *identity.Envelope, from peer.ID) Result {
	if err := an.Check(); err != nil {
		reason := ReasonInvalid
		if errors.Is(err, ErrRegionTooFine) {
			reason = ReasonRegionTooFine
		}
		return reject(reason, fmt.Errorf("gossip: announcement: %w", err))
	}
	snd, now, bad := v.checkSequenced(KindAnnounce, an.MachineID, an.TimeMs, an.Seq, env, from)
	if bad != nil {
		return *bad
	}
	if pinned, ok := v.pins.Lookup(snd.Peer); ok && pinned != snd.Machine {
		return ignore(ReasonPinMismatch, fmt.Errorf("gossip: announcement for %s signed by machine %s, pinned here to %s", snd.Peer, snd.Machine, pinned))
	}
	attested, bad, refused := v.checkAttestation(an, snd, now)
	if bad != nil {
		return *bad
	}
	if err := v.advanceSeq(KindAnnounce, snd.Machine, an.Seq); err != nil {
		return ignore(ReasonReplay, err)
	}
	if pinned := v.pins.Offer(snd.Peer, snd.Machine); pinned != snd.Machine {
		return ignore(ReasonPinMismatch, fmt.Errorf("gossip: %s was pinned here to %s meanwhile", snd.Peer, pinned))
	}
	res := accept(&VerifiedAnnouncement{Sender: snd, Announcement: *an, Attested: attested, AttestRefused: refused}, an)
	if refused != nil {
		// Accepted, labelled with why the attestation was not taken.
		res.Reason, res.Err = "attest_"+attest.Reason(refused), refused
	}
	return res
}

// checkAttestation verifies an announced attestation against the session
// key that signed the announcement. A report that is false whatever the
// verifier trusts (another key, a debug guest, malformed) is the sender's
// fault: Reject. The trusted roots, revocation and the minimum TCB are this
// node's configuration ([attest]), and expiry its clock: the announcement
// is accepted (the provider still serves every other level) and only the
// attestation is set aside, returned as refused, so no honest relay is
// penalised by a node that trusts other roots. Labels are "attest_" +
// attest.Reason.
func (v *Validator) checkAttestation(an *Announcement, snd Sender, now time.Time) (*attest.Result, *Result, error) {
	if an.Attestation == nil {
		return nil, nil, nil
	}
	sess := attest.Session{Pub: snd.Cert.SessionPub, NotAfter: time.UnixMilli(snd.Cert.NotAfter)}
	res, err := attest.Verify(an.Attestation, sess, v.attest, now)
	if err == nil {
		return res, nil, nil
	}
	err = fmt.Errorf("gossip: announcement attestation: %w", err)
	if errors.Is(err, attest.ErrChain) || errors.Is(err, attest.ErrRevoked) || errors.Is(err, attest.ErrStale) {
		return nil, nil, err
	}
	r := reject("attest_"+attest.Reason(err), err)
	return nil, &r, nil
}

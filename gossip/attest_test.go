package gossip

import (
	"testing"
	"time"

	"github.com/google/go-sev-guest/kds"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// attestedAnnouncement offers tee and carries an attestation bound to pub.
func (p *testProvider) attestedAnnouncement(t *testing.T, now time.Time, pub []byte) *Announcement {
	an := p.announcement(now)
	an.Models[0].Verification = append(an.Models[0].Verification, terms.VerifyTEE)
	an.Attestation = attesttest.Attestation(t, pub)
	return an
}

func TestAnnouncementAttestationAccepted(t *testing.T) {
	now := time.Now()
	v, _ := newTestValidator(now)
	v.SetAttestPolicy(attesttest.Policy(t))
	p := newTestProvider(t, now)
	r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.attestedAnnouncement(t, now, p.sess.Cert.SessionPub)))
	wantVerdict(t, r, Accept, ReasonOK)
	va := r.Value.(*VerifiedAnnouncement)
	if va.Attested == nil || va.Attested.MeasurementHex() == "" || string(va.Attested.Measurement) != string(attesttest.Measurement) {
		t.Fatalf("accepted attestation not carried: %+v", va.Attested)
	}
	if va.Announcement.Attestation == nil {
		t.Fatal("announcement lost its attestation")
	}
}

func TestAnnouncementWithoutAttestationIsNotAttested(t *testing.T) {
	now := time.Now()
	v, _ := newTestValidator(now)
	p := newTestProvider(t, now)
	r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now)))
	wantVerdict(t, r, Accept, ReasonOK)
	if a := r.Value.(*VerifiedAnnouncement).Attested; a != nil {
		t.Fatalf("attested without an attestation: %+v", a)
	}
}

func TestAnnouncementAttestationOfAnotherKeyRejected(t *testing.T) {
	now := time.Now()
	v, _ := newTestValidator(now)
	v.SetAttestPolicy(attesttest.Policy(t))
	p, other := newTestProvider(t, now), newTestProvider(t, now)
	an := p.attestedAnnouncement(t, now, other.sess.Cert.SessionPub)
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an)), Reject, "attest_wrong_key")
}

func TestAnnouncementAttestationWrongChainSetAside(t *testing.T) {
	// The default policy trusts only AMD's real roots; which roots are
	// trusted is this node's configuration, so a relay of a report on
	// another chain is not penalised: the attestation alone is set aside.
	now := time.Now()
	v, _ := newTestValidator(now)
	p := newTestProvider(t, now)
	an := p.attestedAnnouncement(t, now, p.sess.Cert.SessionPub)
	r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an))
	wantVerdict(t, r, Accept, "attest_chain")
	if va := r.Value.(*VerifiedAnnouncement); va.Attested != nil || attest.Reason(va.AttestRefused) != "chain" {
		t.Fatalf("attested %+v, refused %v: want the attestation set aside for chain", va.Attested, va.AttestRefused)
	}
}

func TestAnnouncementAttestationLowTCBSetAside(t *testing.T) {
	// The minimum TCB is this node's view: the announcement is accepted
	// (the provider serves other levels), its attestation set aside.
	now := time.Now()
	v, _ := newTestValidator(now)
	pol := attesttest.Policy(t)
	pol.MinTCB = kds.TCBParts{BlSpl: 3, SnpSpl: 9, UcodeSpl: 115}
	v.SetAttestPolicy(pol)
	p := newTestProvider(t, now)
	an := p.attestedAnnouncement(t, now, p.sess.Cert.SessionPub)
	r := v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, an))
	wantVerdict(t, r, Accept, "attest_low_tcb")
	va := r.Value.(*VerifiedAnnouncement)
	if va.Attested != nil || attest.Reason(va.AttestRefused) != "low_tcb" || attest.Reason(r.Err) != "low_tcb" {
		t.Fatalf("attested %+v, refused %v, err %v: want the attestation set aside for low_tcb", va.Attested, va.AttestRefused, r.Err)
	}
}

package provider

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// attestor keeps the attestation announced with the current session key.
// A device is asked once per session key (at start and whenever the key
// rotates); a file is re-read at each announcement, so an operator's tool
// can replace it. Nothing is announced that does not verify under this
// node's own [attest] policy: a report binding another key, on a chain to
// no trusted root, or stale would be refused by every peer, and a false
// one rejected with a peer-score penalty.
type attestor struct {
	src    source
	policy *attest.Policy
	clock  clock.Clock
	log    *slog.Logger

	mu     sync.Mutex
	pub    []byte              // the session key att binds
	att    *attest.Attestation // nil when the last fetch or check failed
	res    *attest.Result
	logged string // the last state logged: "ok" or a failure's text
	sent   []byte // the session key of the last announcement
}

func newAttestor(src source, policy *attest.Policy, clk clock.Clock, log *slog.Logger) *attestor {
	if src == nil {
		return nil
	}
	if policy == nil {
		policy = &attest.Policy{}
	}
	return &attestor{src: src, policy: policy, clock: clk, log: log.With("component", "attest")}
}

// start obtains the first session's attestation. A device that cannot
// produce a valid one is an error (the operator asked for `tee`); a file
// may not exist yet, since its producer needs the REPORT_DATA this writes.
func (a *attestor) start(sess *identity.Session) error {
	if a == nil {
		return nil
	}
	_, err := a.current(sess)
	if err != nil && a.src.bound() {
		return fmt.Errorf("provider: attestation: %w", err)
	}
	return nil
}

// forAnnouncement returns the attestation to announce with sess, nil when
// there is none that verifies (the reason is logged once).
func (a *attestor) forAnnouncement(sess *identity.Session) *attest.Attestation {
	if a == nil {
		return nil
	}
	att, err := a.current(sess)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = sess.Cert.SessionPub
	if err != nil {
		if msg := err.Error(); msg != a.logged {
			a.logged = msg
			a.log.Warn("announcing without an attestation: not quoted at tee", "reason", attest.Reason(err), "err", err)
		}
		return nil
	}
	if a.logged != "ok" && a.res.Kind == attest.KindTest {
		a.logged = "ok"
		a.log.Warn("TEST-ONLY attestation announced: quoted at tee only by nodes trusting the devnet's test root; it proves nothing",
			"kind", a.res.Kind, "measurement", a.res.MeasurementHex())
	}
	if a.logged != "ok" {
		a.logged = "ok"
		a.log.Info("attestation announced", "kind", a.res.Kind, "measurement", a.res.MeasurementHex(),
			"product_line", a.res.ProductLine)
	}
	return att
}

// rotated reports whether the session key changed since the last
// announcement: the attestation announced binds the old one, so a new
// announcement is due now, not at the next interval.
func (a *attestor) rotated(keeper *identity.SessionKeeper) bool {
	return a.checkKey(keeper, func(pub []byte) bool { return a.sent != nil && !bytes.Equal(a.sent, pub) })
}

// checkKey is f of the session key the provider signs with now, under the
// attestor's lock; false when there is no such key.
func (a *attestor) checkKey(keeper *identity.SessionKeeper, f func(pub []byte) bool) bool {
	pub, ok := a.signingKey(keeper)
	if !ok {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return f(pub)
}

// signingKey is the session key the provider signs with now; false when
// there is no attestor or no session.
func (a *attestor) signingKey(keeper *identity.SessionKeeper) ([]byte, bool) {
	if a == nil {
		return nil, false
	}
	sess, err := keeper.Current()
	if err != nil {
		return nil, false
	}
	return sess.Cert.SessionPub, true
}

// Attested is what the announced attestation proved under this node's
// policy, nil when none is announced.
func (a *attestor) attested() *attest.Result {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.att == nil {
		return nil
	}
	return a.res
}

func (a *attestor) current(sess *identity.Session) (*attest.Attestation, error) {
	pub := sess.Cert.SessionPub
	a.mu.Lock()
	if a.src.bound() && a.att != nil && bytes.Equal(a.pub, pub) {
		att := a.att
		a.mu.Unlock()
		return att, nil
	}
	a.mu.Unlock()
	att, err := a.src.fetch(pub)
	var res *attest.Result
	if err == nil {
		s := attest.Session{Pub: pub, NotAfter: time.UnixMilli(sess.Cert.NotAfter)}
		res, err = attest.Verify(att, s, a.policy, a.clock.Now())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pub = bytes.Clone(pub)
	if err != nil {
		a.att, a.res = nil, nil
		return nil, err
	}
	a.att, a.res = att, res
	return att, nil
}

// binds reports whether a verified attestation binds the session key the
// provider signs with now: a `tee` call is served only then.
func (a *attestor) binds(keeper *identity.SessionKeeper) bool {
	return a.checkKey(keeper, func(pub []byte) bool { return a.att != nil && bytes.Equal(a.pub, pub) })
}

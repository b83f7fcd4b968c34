package gossip

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// DefaultWindow is how far a message's own timestamp may be from the
// receiver's clock before the message is ignored as stale.
const DefaultWindow = 30 * time.Second

// Bounds on validator memory: an attacker can mint many machine identities,
// so per-machine state is kept in LRU caches rather than unbounded maps.
const (
	certCacheSize = 4096
	seqCacheSize  = 65536
)

// Sender is who signed an accepted message, as proven by its certificate.
type Sender struct {
	Peer     peer.ID
	Machine  identity.MachineID
	Backend  string
	Cert     identity.Certificate
	Received time.Time
	// ReceivedFrom is the peer that propagated the message to this node
	// (the signer itself or a relay).
	ReceivedFrom peer.ID
}

// VerifiedHeartbeat is an accepted heartbeat and its proven sender.
type VerifiedHeartbeat struct {
	Sender
	Heartbeat
}

// VerifiedAnnouncement is an accepted announcement and its proven sender.
type VerifiedAnnouncement struct {
	Sender
	Announcement
	// Attested is what the announcement's attestation proves; nil when it
	// carries none or this node's policy set it aside.
	Attested *attest.Result
	// AttestRefused is why this node's policy set the attestation aside
	// (revoked, TCB below the minimum, session expired); nil otherwise.
	AttestRefused error
}

// Validator holds the state the topic validators share: the pin store,
// verified certificates and the last sequence number seen per machine.
type Validator struct {
	network string
	window  time.Duration
	clock   clock.Clock
	pins    Pins

	certs *identity.CertCache
	memo  *certMemo

	seqMu sync.Mutex
	seqs  *lru.Cache[seqKey, uint64]

	obs obsState

	attest *attest.Policy // what announced attestations are verified against
}

type seqKey struct {
	kind    Kind
	machine identity.MachineID
}

// NewValidator returns a validator. A zero window means DefaultWindow; a nil
// clock means the wall clock.
func NewValidator(network string, window time.Duration, clk clock.Clock, pins Pins) *Validator {
	if window <= 0 {
		window = DefaultWindow
	}
	if clk == nil {
		clk = clock.New()
	}
	seqs, _ := lru.New[seqKey, uint64](seqCacheSize)
	seen, _ := lru.New[obsKey, struct{}](seqCacheSize)
	return &Validator{network: network, window: window, clock: clk, pins: pins, certs: identity.NewCertCache(certCacheSize), memo: newCertMemo(certCacheSize), seqs: seqs,
		obs: obsState{seen: seen}, attest: &attest.Policy{}}
}

// SetAttestPolicy sets the roots, CRLs and minimum TCB announced
// attestations are verified against (default: AMD's roots, no CRL, no
// minimum). Call it before the validator is used.
func (v *Validator) SetAttestPolicy(p *attest.Policy) {
	if p != nil {
		v.attest = p
	}
}

// Pins returns the pin store the validator checks against.
func (v *Validator) Pins() Pins { return v.pins }

// decode is the cheap first half of every validator: size, envelope
// encoding and domain, nothing that costs a signature check.
func (v *Validator) decode(kind Kind, data []byte) (*identity.Envelope, *Result) {
	spec, _ := Spec(kind)
	if len(data) > spec.MaxSize {
		r := reject(ReasonTooLarge, fmt.Errorf("gossip: %s message of %d bytes exceeds %d", kind, len(data), spec.MaxSize))
		return nil, &r
	}
	env, err := identity.UnmarshalEnvelope(data, spec.MaxSize)
	if err != nil {
		r := reject(ReasonMalformed, fmt.Errorf("gossip: %s: %w", kind, err))
		return nil, &r
	}
	if env.Domain != spec.Domain || env.PayloadType != spec.PayloadType {
		r := reject(ReasonWrongDomain, fmt.Errorf("gossip: %s: domain %q type %q", kind, env.Domain, env.PayloadType))
		return nil, &r
	}
	return env, nil
}

// validatePayload is the frame of every topic's validator: the envelope
// decoded (decode), its payload decoded as a T (what names it in the
// error), then check; the result carries the message.
func validatePayload[T any](v *Validator, kind Kind, what string, data []byte, check func(*T, *identity.Envelope) Result) Result {
	env, bad := v.decode(kind, data)
	if bad != nil {
		return *bad
	}
	var m T
	if err := cborx.UnmarshalCanonical(env.Payload, len(env.Payload), &m); err != nil {
		return reject(ReasonMalformed, fmt.Errorf("gossip: %s payload: %w", what, err))
	}
	res := check(&m, env)
	res.Message = &m
	return res
}

// certMachine is the machine ID the envelope's certificate claims. Before
// authenticate it is only a claim, good for cheap checks that a forger
// cannot turn against the real machine (comparisons, never state).
func certMachine(env *identity.Envelope) (m identity.MachineID) {
	copy(m[:], env.Cert.MachineID)
	return m
}

// checkSequenced applies the rules a provider's sequenced messages
// (heartbeat, announcement) share, cheapest first: the body names the
// machine its certificate claims (Reject), its time is in the window and
// its seq above the last accepted (Ignore), and only then the certificate
// and signature (authenticate). now is the validation's time.
func (v *Validator) checkSequenced(kind Kind, machine []byte, timeMs int64, seq uint64, env *identity.Envelope, from peer.ID) (snd Sender, now time.Time, bad *Result) {
	claimed := certMachine(env)
	var r Result
	now = v.clock.Now()
	if string(machine) != string(claimed[:]) {
		r = reject(ReasonMachineMismatch, fmt.Errorf("gossip: %s names machine %x but is signed for %s", kind, machine, claimed))
	} else if err := v.fresh(timeMs, now); err != nil {
		r = ignore(ReasonStale, err)
	} else if err := v.seqAbove(kind, claimed, seq); err != nil {
		r = ignore(ReasonReplay, err)
	} else {
		snd, bad = v.authenticate(kind, env, from, now)
		return snd, now, bad
	}
	return Sender{}, now, &r
}

// authenticate is the expensive second half: certificate chain and
// signature. from is the peer that propagated the message.
func (v *Validator) authenticate(kind Kind, env *identity.Envelope, from peer.ID, now time.Time) (Sender, *Result) {
	if mc, ok := v.memo.lookup(&env.Cert); ok {
		// The certificate verified before: only its window and this
		// message's signature remain.
		if r := validity(&env.Cert, now); r != nil {
			return Sender{}, r
		}
		if !verifyWith(env, mc.key) {
			r := reject(ReasonBadSignature, fmt.Errorf("gossip: %s: %w", kind, identity.ErrBadSignature))
			return Sender{}, &r
		}
		return Sender{Peer: mc.peer, Machine: certMachine(env), Backend: env.Cert.Backend, Cert: env.Cert, Received: now, ReceivedFrom: from}, nil
	}
	if r := v.checkCert(&env.Cert, now); r != nil {
		return Sender{}, r
	}
	key, err := env.Cert.SessionKey()
	if err != nil {
		r := reject(ReasonBadCert, fmt.Errorf("gossip: %s: %w", kind, err))
		return Sender{}, &r
	}
	if !verifyWith(env, key) {
		r := reject(ReasonBadSignature, fmt.Errorf("gossip: %s: %w", kind, identity.ErrBadSignature))
		return Sender{}, &r
	}
	pid, err := env.Cert.Peer()
	if err != nil {
		r := reject(ReasonBadCert, fmt.Errorf("gossip: %s: %w", kind, err))
		return Sender{}, &r
	}
	v.memo.remember(&env.Cert, key, pid)
	return Sender{Peer: pid, Machine: certMachine(env), Backend: env.Cert.Backend, Cert: env.Cert, Received: now, ReceivedFrom: from}, nil
}

// checkCert verifies a certificate's chain once and caches the result; the
// validity period is checked on every message.
func (v *Validator) checkCert(c *identity.Certificate, now time.Time) *Result {
	if err := v.certs.Verify(c, identity.MachineID{}, now); err != nil {
		// A validity period is judged on this node's clock: outside it is
		// Ignore, like a stale timestamp, so clock skew never penalises a relay.
		if errors.Is(err, identity.ErrCertExpired) || errors.Is(err, identity.ErrCertNotYetValid) {
			r := ignore(ReasonCertExpired, fmt.Errorf("gossip: %w", err))
			return &r
		}
		r := reject(ReasonBadCert, fmt.Errorf("gossip: %w", err))
		return &r
	}
	return nil
}

// fresh reports whether a message stamped at ms is inside the window.
func (v *Validator) fresh(ms int64, now time.Time) error {
	d := now.Sub(time.UnixMilli(ms))
	if d > v.window || d < -v.window {
		return fmt.Errorf("gossip: message time %s is %s from local time (window ±%s)",
			time.UnixMilli(ms).UTC().Format(time.RFC3339Nano), d.Round(time.Millisecond), v.window)
	}
	return nil
}

// seqAbove reports whether seq is above the last accepted one for (kind,
// machine) without recording it: the cheap replay check made before the
// signature, which must not let a forger move the counter.
func (v *Validator) seqAbove(kind Kind, m identity.MachineID, seq uint64) error {
	v.seqMu.Lock()
	defer v.seqMu.Unlock()
	if last, ok := v.seqs.Peek(seqKey{kind, m}); ok && seq <= last {
		return fmt.Errorf("gossip: %s seq %d not above last %d", kind, seq, last)
	}
	return nil
}

// advanceSeq records seq for (kind, machine) if it is strictly greater than
// the last accepted one.
func (v *Validator) advanceSeq(kind Kind, m identity.MachineID, seq uint64) error {
	v.seqMu.Lock()
	defer v.seqMu.Unlock()
	k := seqKey{kind, m}
	if last, ok := v.seqs.Get(k); ok && seq <= last {
		return fmt.Errorf("gossip: %s seq %d not above last %d", kind, seq, last)
	}
	v.seqs.Add(k, seq)
	return nil
}

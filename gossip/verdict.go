package gossip

import (
	pubsub "github.com/libp2p/go-libp2p-pubsub"
)

// Verdict is a validator's decision on one message.
type Verdict int

const (
	Accept Verdict = iota
	Ignore
	Reject
)

func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case Ignore:
		return "ignore"
	default:
		return "reject"
	}
}

func (v Verdict) pubsub() pubsub.ValidationResult {
	switch v {
	case Accept:
		return pubsub.ValidationAccept
	case Ignore:
		return pubsub.ValidationIgnore
	default:
		return pubsub.ValidationReject
	}
}

// Reasons a message is ignored or rejected; they label metrics and the tap,
// so they are short, stable identifiers.
const (
	ReasonOK              = "ok"
	ReasonTooLarge        = "too_large"
	ReasonMalformed       = "malformed"
	ReasonWrongDomain     = "wrong_domain"
	ReasonBadCert         = "bad_cert"
	ReasonCertExpired     = "cert_expired"
	ReasonBadSignature    = "bad_signature"
	ReasonMachineMismatch = "machine_mismatch" // the body names a machine other than its certificate's
	ReasonPinMismatch     = "pin_mismatch"     // signed by a machine other than the one pinned or registered here
	ReasonUnpinned        = "unpinned"
	ReasonInvalid         = "invalid"
	ReasonRegionTooFine   = "region_too_fine"
	ReasonStale           = "stale"
	ReasonReplay          = "replay"
	ReasonPanic           = "panic"   // the validator panicked (a bug here, not the sender's fault)
	ReasonTimeout         = "timeout" // the validation's local deadline passed
)

// Result is what a topic validator returns: the verdict, its reason, and on
// Accept the verified value handed on to subscribers.
type Result struct {
	Verdict Verdict
	Reason  string
	Err     error
	Value   any // *VerifiedHeartbeat, *VerifiedAnnouncement or *VerifiedPriceObs on Accept
	Message any // the decoded payload, when it decoded (for the tap)
}

func accept(v, msg any) Result {
	return Result{Verdict: Accept, Reason: ReasonOK, Value: v, Message: msg}
}

func reject(reason string, err error) Result {
	return Result{Verdict: Reject, Reason: reason, Err: err}
}

func ignore(reason string, err error) Result {
	return Result{Verdict: Ignore, Reason: reason, Err: err}
}

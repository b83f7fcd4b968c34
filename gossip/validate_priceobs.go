package gossip

import (
	"context"
	"fmt"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Reasons specific to price observations.
const (
	ReasonNoValidatorSet = "no_validator_set"
	ReasonNotValidator   = "not_validator"
	ReasonOwnProvider    = "own_provider"
	ReasonUnregistered   = "unregistered"
	ReasonUnavailable    = "registry_unavailable"
)

// ValidatorSet is what the price-observation validator reads of consensus
// state. Accounts are Ed25519 public keys (consensus.AccountID).
type ValidatorSet interface {
	// ActiveValidator reports whether account operates a validator with
	// power in the current validator set.
	ActiveValidator(ctx context.Context, account [32]byte) (bool, error)
	// ProviderOperator returns the operator account and libp2p peer ID of
	// the registered machine m; false when m is not registered.
	ProviderOperator(ctx context.Context, m identity.MachineID) (operator [32]byte, peerID string, ok bool, err error)
}

// VerifiedPriceObs is an accepted observation and the node that relayed
// it first (the observer's own node, whose session sealed the envelope).
type VerifiedPriceObs struct {
	Sender
	PriceObs
}

// obsState is the price-observation part of the Validator.
type obsState struct {
	mu   sync.RWMutex
	set  ValidatorSet
	seen *lru.Cache[obsKey, struct{}]
}

type obsKey struct {
	observer [32]byte
	seq      uint64
}

// SetValidatorSet sets the consensus view price observations are admitted
// against. Without one every observation is ignored: nobody can be shown to
// be an active validator.
func (v *Validator) SetValidatorSet(s ValidatorSet) {
	v.obs.mu.Lock()
	v.obs.set = s
	v.obs.mu.Unlock()
}

// ValidatePriceObs applies the price-observation topic's rules to one
// message that from propagated; ctx bounds the consensus-state reads.
//
// The envelope must be sound (as every topic), and the observation must be
// signed by its Observer, an operator account key. Reject, for what is
// invalid on its own bytes: malformed, out-of-range numbers, forged or
// altered (envelope or observer signature). Ignore, for what depends on
// this node's chain view or clock: no validator set (no chain), the chain
// could not answer, an observer not (yet) an active validator here, the
// provider not registered, registered to another peer, or operated by the
// observer's own account, outside the freshness window, or an (observer,
// seq) already seen.
func (v *Validator) ValidatePriceObs(ctx context.Context, from peer.ID, data []byte) Result {
	return validatePayload(v, KindPriceObs, "price observation", data, func(o *PriceObs, env *identity.Envelope) Result {
		return v.checkPriceObs(ctx, o, env, from)
	})
}

func (v *Validator) checkPriceObs(ctx context.Context, o *PriceObs, env *identity.Envelope, from peer.ID) Result {
	if err := o.Check(); err != nil {
		return reject(ReasonInvalid, fmt.Errorf("gossip: price observation: %w", err))
	}
	now := v.clock.Now()
	if err := v.fresh(o.TimeMs, now); err != nil {
		return ignore(ReasonStale, err)
	}
	v.obs.mu.RLock()
	set, seen := v.obs.set, v.obs.seen
	v.obs.mu.RUnlock()
	var observer [32]byte
	copy(observer[:], o.Observer)
	k := obsKey{observer: observer, seq: o.Seq}
	if seen.Contains(k) {
		return ignore(ReasonReplay, fmt.Errorf("gossip: price observation %x/%d already seen", observer, o.Seq))
	}
	snd, bad := v.authenticate(KindPriceObs, env, from, now)
	if bad != nil {
		return *bad
	}
	if err := o.VerifyObserver(); err != nil {
		return reject(ReasonBadSignature, err)
	}
	if set == nil {
		return ignore(ReasonNoValidatorSet, fmt.Errorf("gossip: price observation: no validator set to admit it against"))
	}
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	active, err := set.ActiveValidator(ctx, observer)
	if err != nil {
		return ignore(ReasonUnavailable, fmt.Errorf("gossip: price observation: validator set: %w", err))
	}
	if !active {
		return ignore(ReasonNotValidator, fmt.Errorf("gossip: price observation from %x, not an active validator here", observer))
	}
	var m identity.MachineID
	copy(m[:], o.ProviderMachine)
	op, pid, ok, err := set.ProviderOperator(ctx, m)
	if err != nil {
		return ignore(ReasonUnavailable, fmt.Errorf("gossip: price observation: provider %s: %w", m, err))
	}
	if !ok {
		return ignore(ReasonUnregistered, fmt.Errorf("gossip: price observation on unregistered machine %s", m))
	}
	if pid != o.ProviderPeer {
		return ignore(ReasonPinMismatch, fmt.Errorf("gossip: price observation names peer %s for machine %s, registered here to %s", o.ProviderPeer, m, pid))
	}
	if op == observer {
		return ignore(ReasonOwnProvider, fmt.Errorf("gossip: validator %x observing its own provider %s", observer, m))
	}
	if ok, _ := seen.ContainsOrAdd(k, struct{}{}); ok {
		return ignore(ReasonReplay, fmt.Errorf("gossip: price observation %x/%d already seen", observer, o.Seq))
	}
	return accept(&VerifiedPriceObs{Sender: snd, PriceObs: *o}, o)
}

// Package breaker keeps the router from hammering a provider that is
// failing or asked for less traffic.
//
// Each provider has a Breaker. Closed, it admits every request and counts
// consecutive failures; Config.Failures of them open it. Open, it refuses
// everything for a cooldown read from an injected clock. Then it is
// half-open: exactly one caller gets a probe ticket while everyone else is
// refused; the probe's success closes the breaker, its failure re-opens it
// with the cooldown multiplied by CooldownFactor (capped at MaxCooldown).
// A probe that is cancelled or throttled hands its slot back; one that is
// never reported is presumed lost after ProbeTimeout.
//
// Independently of the state, a provider's Retry-After (any outcome may
// carry one) holds all traffic to it
// until then, capped at MaxRetryAfter. A 429 without Retry-After holds it
// for an exponential backoff with equal jitter from an injected source:
// BackoffBase·2^(k-1) for the k-th consecutive 429, capped at BackoffMax,
// drawn uniformly from [d/2, d].
//
// Every Allow that returns a ticket must be matched by one Report. Tickets
// are tied to the state they were issued in, so a late report from before
// the breaker opened or closed cannot flip it again.
package breaker

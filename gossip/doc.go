// Package gossip carries tenzrod's signed broadcast messages over GossipSub.
//
// Every topic, its message kind and its signing domain are declared once in
// the topic table (topics.go). Messages travel as identity.Envelope values:
// a deterministic-CBOR payload signed by a provider's session key, with the
// session certificate that chains the key to the provider's machine ID.
//
// Each topic has a validator that returns Accept, Ignore or Reject, in the
// manner of Prysm's validate_* functions: Reject for anything provably bad
// (bad signature, wrong key, malformed, region finer than a country), Ignore
// for what is merely not useful now (stale, replayed sequence, provider not
// yet pinned). Accepted messages hand their decoded, verified value on as the
// pubsub ValidatorData so subscribers never decode twice.
//
// Price observations (price-obs) carry, inside the envelope, a second
// signature: the observing validator's operator account key. That account
// must operate an active validator in consensus state (ValidatorSet), and
// must not operate the provider observed; the envelope's session key only
// frames the message like every other topic.
//
// PubSub runs with StrictNoSign and WithNoAuthor: origin authenticity comes
// from the envelope, not from libp2p's per-message signatures, and message
// IDs are the SHA-256 of the message bytes so identical bytes are one message.
package gossip

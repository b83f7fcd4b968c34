// Package gossip carries tenzrod's signed broadcast messages over GossipSub.
//
// Every topic, its message kind and its signing domain are declared once in
// the topic table (topics.go). Messages travel as identity.Envelope values:
// a deterministic-CBOR payload signed by a provider's session key, with the
// session certificate that chains the key to the provider's machine ID.
//
// Each topic has a validator, a pure function of the pubsub context, the
// propagating peer and the message bytes that returns Accept, Ignore or
// Reject with a reason, in the manner of Prysm's validate_* functions.
// Reject is only for what is invalid on the message's own bytes, which every
// node sees alike: oversized, malformed, wrong domain, bad certificate or
// signature, a body naming another machine than its certificate, a region
// finer than a country. Whatever depends on this node's view is Ignore: a
// pin or registration mismatch (the registration may be missing here or
// stale), an observer not (yet) an active validator, stale or future
// timestamps and certificate validity on this clock, replayed sequence
// numbers. Peer scoring penalises Rejects only, so an honest relay is never
// scored down for a view another node holds. Cheap checks (size, decoding,
// structure, window, seq) run before signatures, so a flood of stale or
// replayed messages costs no signature checks. The service runs every
// validator under a guard: a local deadline, a panic turned into
// Ignore/panic and a verdict reached after the deadline into
// Ignore/timeout. Accepted messages hand their decoded, verified value on as
// the pubsub ValidatorData so subscribers never decode twice.
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

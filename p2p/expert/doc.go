// Package expert implements /tenzro/expert/1.0.0, by which a node serving
// a mixture-of-experts model runs experts at other providers (holders),
// and the caller side that verifies every answer before a row is used.
//
// # Exchange
//
// Per MoE layer of a forward pass, the caller opens one stream to each
// holder its batches were routed to and writes one Request frame: network,
// model ID, layer, row width and every batch of that layer for that holder
// (expert, positions, input rows as little-endian float32 bytes), then
// half-closes. The holder computes each batch with its own verified copy of
// the weights (its Computer) and answers one Response frame: one output
// per batch and a Receipt sealed in an identity.Envelope (domain
// ReceiptDomain) by its certified session key. The receipt names the
// model, layer, the holder's machine and peer, and per batch the expert,
// the positions, the SHA-256 of the exact input bytes received and the
// SHA-256 of the exact output bytes returned. A refusal is a nonzero Code
// with a reason and no rows. Frames are canonical CBOR (receipts/cborx) in
// uvarint length-prefixed frames (p2p.WriteFrame); decoders accept only
// canonical bytes within MaxRequestSize / MaxResponseSize.
//
// # Verification and standby
//
// Caller.Layer groups a layer's batches by holder (Table's first choice),
// runs the exchanges at once, each bounded by CallerConfig.Timeout, and
// uses a holder's rows only after Verify (certificate chain to the
// machine pinned for the holder, certificate bound to the answering peer,
// session signature) and Match (model, layer, experts, positions, input
// hashes of the bytes sent, output hashes of the bytes received). A holder
// whose exchange fails in any way is retired for those batches, counted in
// the caller's breaker and Stats (never in its standing: that falls only
// through a dispute), and the batches go, in one more round, to their next
// holders. A batch no holder answers fails the forward pass with
// ErrNoHolder; an expert is never skipped.
//
// Each call's verified work per holder (exchanges, expert-tokens, receipt
// envelopes) accumulates in the Tally of its context (WithTally), from
// which the serving node pays each holder.
//
// # Sampled batches for dispute
//
// With CallerConfig.Sampler, about one verified batch in SampleRate is
// handed to OnSample in full (input and output bytes, the holder's
// receipt envelope): the choice is HMAC-SHA256 under the caller's secret
// over the signed envelope and the batch's index, made only after the
// receipt verified, so a holder cannot tell which answers are kept. A
// Rechecker stores them (SampleStore, bounded, oldest pruned) and
// re-executes each with a Redoer (LocalRedo with the node's own weights,
// or Caller.Redo at another holder of the expert); an output that differs
// from the signed one becomes Evidence, named for the ledger by
// ExpertBatchRef.
//
// # Limits
//
// Streams are attached to the ServiceName resource-manager service
// (p2p.AddServiceLimits sets its per-peer limits) and the holder reserves
// memory for a request before reading it. At most ServerConfig.MaxPerPeer
// exchanges of one caller and MaxConcurrent in all are in progress; a
// stream beyond that, or carrying a malformed or oversized frame, is reset
// before anything is computed. One exchange lasts at most
// ServerConfig.Timeout at the holder.
package expert

// Package pricing prices a request on a provider's rate card and binds the
// result in a quote digest.
//
// A rate card (terms.RateCard) gives integer micro-unit prices per
// input_tokens, output_tokens, cached_tokens, pixel_steps, audio_ms and
// expert_tokens (the rows a MoE model's experts computed at holders for
// the call), and a per-call minimum. The price of a request is
//
//	max(minimum, Σ units × unit price) + surcharge(verification level)
//
// where the surcharge is the governed flat amount of the requested level
// (none, receipt, optimistic, tee): the chain's surcharge_* params, in
// micro-units per call; only a node without a chain uses its configured
// [router.surcharges] instead. All arithmetic is checked uint64: a
// product or sum beyond 2^64-1 micro-units is ErrOverflow, never a wrapped
// (and therefore tiny) price. Price returns the whole Breakdown.
//
// A Quote records provider peer ID, machine ID, catalog model ID, units,
// level, breakdown and expiry (to the millisecond); its Digest is SHA-256
// over the quote's Core Deterministic CBOR (receipts/cborx) with the domain
// "tenzro/v1/quote" as its first field. Payment records bind that digest.
package pricing

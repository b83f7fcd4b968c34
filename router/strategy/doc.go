// Package strategy orders the providers that can serve a request: the
// primary first, then the fallbacks a hedge or a retry goes to.
//
// Signals per Candidate: the request's price at the provider (from its
// rate card), latency measured on the router's own clock (P² p95 and a
// recent mean; possibly unknown), consensus standing (basis points) and
// live load (heartbeat in-flight / capacity), plus the two gates: the
// failure detector says up, and the provider's breaker would admit.
//
// Strategies:
//
//	price     cheapest first
//	latency   lowest effective latency, (p95 + mean) / 2, first
//	standing  highest standing first
//	random    uniform shuffle from an injected source
//	weighted  (default) highest weighted score of normalised price,
//	          latency, standing and load; weights configurable
//
// Every strategy leaves out providers that are down, whose breaker refuses,
// that the request excludes, or that cost more than its cap, and puts
// saturated providers after those with headroom. Ties break on price, then
// latency, then peer ID, so rankings are deterministic.
package strategy

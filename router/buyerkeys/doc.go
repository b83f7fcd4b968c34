// Package buyerkeys keeps the buyer keys a gateway's operator creates at
// run time (no restart, unlike [[router.buyers]]) and enforces their
// budgets.
//
// A key's secret is never stored: only its SHA-256, as the config file
// keeps its buyers'. Each key may carry a budget per period, per-request
// and concurrency caps, a rate, allowed models and default provider
// preferences (kept as raw JSON for the router's preference parser).
//
// Spend is counted from billed calls only, written durably before the
// buyer gets the answer and keyed by the bill's request digest, so a
// crash never counts a bill twice. While a call is in flight its
// worst-case price is reserved in memory: a reservation dies with the
// process (nothing was billed for it), so only billed spend is durable,
// and concurrent calls cannot together overshoot a budget.
package buyerkeys

// Package attacktest holds the market's adversarial scenarios: every break
// found by abuse testing so far (issue 19's probes, issue 35's front-run,
// slow-body starvation and session read), and issue 35's new ideas
// (re-signed and racing payment records in every combination of settler,
// payer, price and units, records for calls that never happened, fee
// spam). Each scenario is a plain function over a gateway's HTTP API (its
// OpenAI routes and its JSON-RPC, which also reaches the chain), so one
// definition serves both the in-process test (node's
// TestAttackScenarios, on a real chain and real libp2p hosts) and
// cmd/attack (scripts/attack), which runs them against a running devnet.
//
// A scenario answers held or BROKE with a detail line, and each run ends
// with an honest call whose success is part of the verdict: an attack
// that fails but takes honest traffic down with it is not held. Traffic
// is bounded (counts and durations are in Target), so the suite is safe
// to point at a shared devnet.
package attacktest

// Package hedge races a request across providers: Run sends it to the best
// candidate, and if no answer has started by clamp(that provider's own p95,
// 40 ms, 500 ms) sends one hedge to the next-best eligible provider (never
// nested, never to a down or open-breaker provider), cancels the loser as
// soon as one answers, and fails over to the next candidates, up to a
// limit, when both fail. Errors marked Permanent (the request's own fault)
// end the race at once. Simulate drives Run against simulated providers
// with heavy-tailed latency mixes in virtual time (scripts/bench-tail).
package hedge

// Package gateway routes a buyer's request across the market: it quotes
// the request at every provider serving the model that can meet the
// verification level, ranks them by the chosen strategy on the router's own
// latency figures, sends the request over /tenzro/infer/1.0.0, hedges the
// tail at the primary's P² p95 of time to first token, fails over, continues
// a stream that breaks mid-answer on another provider, verifies the
// winner's receipt against the machine its announcement is pinned to, and
// bills only the winner, each dimension capped by what crossed the wire.
//
// Streaming and hedging meet at the first token: an attempt "answers" when
// its first token (or its final frame) arrives. The first attempt to answer
// wins and the other is cancelled, so the buyer's stream carries one
// provider's text; the rest of the winner's stream is drained after the
// race.
package gateway

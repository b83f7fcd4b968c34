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
//
// Around that core: a request is checked against every limit of the infer
// protocol before anything else (Validate: 400 naming the field), held to
// its buyer's fair share (BuyerLimits: 429 naming the limit), and its model
// resolved to exactly one catalog ID (a hex ID, a name the Names resolver
// binds, or a name the usable offers agree on). Providers are reached
// through a Transport (HostTransport in a node, a scripted one in tests).
// A request the provider refuses as invalid, or a provider's busy answer,
// never counts against it. A buyer who leaves mid-stream stops the
// provider (ErrStop) and pays, receipt verified, for what was delivered.
//
// A MoE model whose experts run at holders adds expert-tokens to the
// receipt's units (experts.go): the quote prices them, and the bill caps
// them, at top-k × MoE layers × (prompt + output tokens), the shape taken
// from the gateway's own copy of the model where it holds one
// (MoEShaper), else from the offer. The final frame's holders are passed
// to the buyer (Result.Experts) only when the receipt signs them (its
// ExpertsHash) and their expert-tokens add up to its units.
//
// For the operator's page the gateway keeps its last RecentKept finished
// requests (recent.go) and the latest LatencyKept latency samples per
// provider that fed its p95 (latency.go), both in fixed rings.
//
// Sessions (session*.go): a request with a SessionRequest is one turn of
// a session the gateway keeps in a bounded table. Every turn goes to the
// session's primary while it is up, unhedged. With continuity the gateway
// picks the successor itself (same model, the jurisdiction, another
// on-chain operator, cheapest standby fee), funds its standby by a stream
// escrow (Deps.Streams), assigns it (Deps.Successors) and names it in the
// primary's infer.Request.Session, so the primary seals its state to it
// after the turn. A turn the primary cannot serve goes to the successor
// with Failover set; it becomes the primary and gets a successor of its
// own. Successors are challenged for the turn they hold, at each turn,
// every challenge_interval between turns and at once when their
// heartbeats lapse (CheckSuccessors); one that fails loses the session
// and its stream, and a replacement is engaged for the primary at once.
// With Deps.SessionStore the table is stored as it changes and taken back
// at start (RestoreSessions): a restarted gateway continues each session
// with its successor and stream, or stops the stream of one it cannot.
//
// With Deps.Tracer every request is one OpenTelemetry trace (trace.go):
// a root span named by the GenAI conventions and a span per step, each
// attempt labelled with its provider, outcome and whether it is the hedge.
package gateway

// Package provider is the provider role of a tenzrod node: the model set
// it serves (embedded engine or an upstream OpenAI-compatible engine), the
// /tenzro/infer/1.0.0 server that runs requests and signs their receipts
// (infer_server.go), its own OpenAI routes, the announcements and
// heartbeats it gossips (announce.go), and its on-chain registration
// (register.go), and its part in sessions with continuity (session*.go):
// as a primary it keeps each session's conversation warm in its engine
// and seals it after every turn to the session's successor over
// /tenzro/session-cache/1.0.0; with [provider.standby] it stands by as a
// successor (announced fee and X-Wing key), pre-fills the states it is
// sent, serves a failed-over turn from them (the receipt's cached_tokens
// say how much it reused) and, on a chain, holds a session only against a
// funded standby stream whose accrual it claims. It holds experts of MoE
// models for others ([[provider.experts]], expert_holder.go) and runs the
// experts of its own MoE models at holders ([provider.remote_experts],
// expert_remote.go): each call's verified work per holder is paid before
// its final frame, one signed record per holder (expert_pay.go), and
// reported there (infer.ExpertUse) with the total its receipt claims as
// units.expert_tokens. It gets its dependencies
// as a Deps struct from node/, never the node itself.
package provider
